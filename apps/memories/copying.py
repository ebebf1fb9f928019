"""Inserting many new rows with one COPY instead of a multi-row INSERT.

A batch of a thousand memories as one INSERT statement costs the client more than the server:
Django renders a placeholder per value, psycopg splits the statement again, and pgvector writes
each vector as text number by number. COPY streams the rows: no statement to build, and each
vector is formatted once (nearest.vector_literal). Triggers and constraints run as for an
INSERT, so the rows stored are the same; a clash with a stored row raises Django's
IntegrityError, as bulk_create would.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import connection, models
from pgvector.django import VectorField

from apps.vectors.nearest import vector_literal


def copy_rows(model: type[models.Model], objs: Sequence[models.Model]) -> int:
    """Insert `objs` (new rows, primary keys set unless the key is automatic); returns how many.
    The objects then count as saved, as after bulk_create."""
    if not objs:
        return 0
    opts = model._meta
    fields = [
        f
        for f in opts.concrete_fields
        if not isinstance(f, models.AutoField) and not getattr(f, "generated", False)
    ]
    columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    sql = f"COPY {connection.ops.quote_name(opts.db_table)} ({columns}) FROM STDIN"
    # Logged with the queries (Django's debug cursor), as an INSERT would be.
    with (
        connection.cursor() as cursor,
        connection.wrap_database_errors,
        cursor.copy(sql) as copy,
    ):
        for obj in objs:
            copy.write_row([_db_value(f, obj) for f in fields])
    for obj in objs:
        obj._state.adding = False
        obj._state.db = connection.alias
    return len(objs)


def _db_value(field: models.Field, obj: models.Model):
    value = field.pre_save(obj, add=True)
    if isinstance(field, VectorField):
        return None if value is None else vector_literal(value)
    return field.get_db_prep_save(value, connection)
