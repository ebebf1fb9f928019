"""Keep the full-text vector in the row.

Since 0007 stores the 1.5 KB embedding in the row, a typical row passes PostgreSQL's 2 KB
TOAST threshold, and the toaster moved `search_vector` out of line. Every `@@` in the lexical
stage and in the idf count then fetched it from the TOAST table again: about 16 fetches per
candidate row, two thirds of the database time of a search (docs/benchmarks.md, "What a search
costs PostgreSQL"). STORAGE MAIN keeps it in the row; content and metadata still go out of
line first. Rows written before this migration are rewritten here (only those whose vector
is out of line; setting it to NULL makes the row trigger compute it again, in the row).
"""

from django.db import migrations

BATCH = 5_000


def move_vectors_into_rows(apps, schema_editor):
    connection = schema_editor.connection
    # pg_column_toast_chunk_id (PostgreSQL 17+) finds exactly the out-of-line vectors; on an
    # older server every row is rewritten.
    out_of_line = (
        "pg_column_toast_chunk_id(search_vector) IS NOT NULL"
        if connection.pg_version >= 170000
        else "TRUE"
    )
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM memories_memory WHERE {out_of_line}")
        total = cursor.fetchone()[0]
        done, after = 0, "00000000-0000-0000-0000-000000000000"
        while done < total:
            # Keyset batches by id: each batch commits on its own (the migration is not atomic).
            cursor.execute(
                "UPDATE memories_memory SET search_vector = NULL WHERE id IN ("
                f"SELECT id FROM memories_memory WHERE id > %s AND {out_of_line} "
                "ORDER BY id LIMIT %s) RETURNING id",
                [after, BATCH],
            )
            ids = [row[0] for row in cursor.fetchall()]
            if not ids:
                break
            done, after = done + len(ids), max(ids)
            print(f"\n  search vectors moved into their rows: {done:,} of {total:,}", end="")


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("memories", "0007_halfvec_index"),
    ]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE memories_memory ALTER COLUMN search_vector SET STORAGE MAIN",
            "ALTER TABLE memories_memory ALTER COLUMN search_vector SET STORAGE EXTENDED",
        ),
        migrations.RunPython(move_vectors_into_rows, migrations.RunPython.noop),
    ]
