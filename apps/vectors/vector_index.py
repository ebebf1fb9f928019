"""Rows a large batch writes outside the HNSW index, and the job that adds them: the rule and
the statements, over whichever table the domain names (apps/memories/unindexed.py names the
memories').

Into a graph of 100k-400k vectors, one HNSW insert costs 2-5 ms on two cores, more than the
encoder spends on the text (docs/benchmarks.md, "Write path and ingest"). A batch of at least
VECTOR_INDEX_BEHIND_MIN rows therefore stores its rows with vector_indexed false: the partial
index (memory_embedding_half_hnsw, WHERE vector_indexed) skips them, and the import returns at
the encoder's pace. They are found at once: every walk of the index also scans the namespace's
rows outside it exactly (apps/vectors/nearest.py), which the partial index memory_ns_unindexed
keeps cheap. The vector_index job then adds them, SLICE rows to a transaction, through the
worker or the server's scheduler.

The exact scan bounds what may wait: at most VECTOR_INDEX_BEHIND_MAX rows of one namespace
(about 10 ms more a walk at 5,000 rows, docs/jobs.md). A batch that would pass it is
indexed as it is written, as every single write is. Each batch counts what waits in its own
transaction, so writers running at once may pass the bound by a batch each.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.db import connection, transaction

SLICE = 256


def write_behind(rows: int, waiting: Callable[[], int]) -> bool:
    """Whether a batch of `rows` new rows goes in outside the index: a large batch, while the
    namespace's rows outside (`waiting()`, counted only for a large batch) stay within the
    bound."""
    if rows < settings.VECTOR_INDEX_BEHIND_MIN:
        return False
    bound: int = settings.VECTOR_INDEX_BEHIND_MAX
    return waiting() + rows <= bound


def index_waiting(table: str, namespace_id: int) -> int:
    """Add the namespace's rows of `table` outside the HNSW index to it, SLICE rows to a
    transaction, until none waits; returns how many. Rows another run or a writer holds are
    skipped, not waited for. Only the flag changes."""
    added = 0
    while True:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                f"""
                UPDATE {table} SET vector_indexed = true
                 WHERE id IN (SELECT id FROM {table}
                               WHERE namespace_id = %s AND NOT vector_indexed
                               LIMIT %s FOR UPDATE SKIP LOCKED)
                """,
                [namespace_id, SLICE],
            )
            done = cursor.rowcount
        if not done:
            return added
        added += done
