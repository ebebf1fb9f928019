"""The log of changes to a namespace's memories and passages (NamespaceChange, written by
triggers: migration 0029), kept short.

A process that keeps a namespace's vectors compares the count and largest id of the
namespace's log rows with what it saw when it read them. A deleted row lowers the count, so a
prune could, in one unlucky step, hide a row committed meanwhile; so for each namespace it
deleted rows of, it also moves the newest row to a new, largest id. The newest row of a
namespace is never deleted: after one prune a quiet namespace keeps that single row and the
next prune leaves it alone (its processes read its vectors again once, not at every prune).
"""

from __future__ import annotations

from datetime import timedelta

from django.db import connection, transaction

from .models import NamespaceChange

LOG = NamespaceChange._meta.db_table
KEEP = timedelta(minutes=1)

PRUNE_SQL = f"""
WITH newest AS (SELECT namespace_id, max(id) AS id FROM {LOG} GROUP BY namespace_id),
gone AS (
    DELETE FROM {LOG} c USING newest n
     WHERE c.namespace_id = n.namespace_id AND c.id < n.id
       AND c.at < clock_timestamp() - %s::interval
    RETURNING c.namespace_id
),
moved AS (
    UPDATE {LOG} c SET id = nextval(pg_get_serial_sequence('{LOG}', 'id')) FROM newest n
     WHERE c.id = n.id AND n.namespace_id IN (SELECT namespace_id FROM gone)
    RETURNING 1
)
SELECT (SELECT count(*) FROM gone), (SELECT count(*) FROM moved)
"""


def namespace_changes_prune(*, keep: timedelta = KEEP) -> dict[str, int]:
    """Delete the log rows older than `keep` (but each namespace's newest); returns how many
    went and how many namespaces they were of."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(PRUNE_SQL, [f"{keep.total_seconds()} seconds"])
        deleted, namespaces = cursor.fetchone()
    return {"changes_deleted": int(deleted), "namespaces": int(namespaces)}
