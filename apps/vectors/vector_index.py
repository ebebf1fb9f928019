"""Rows a large batch writes outside the HNSW index, and the job that adds them.

Into a graph of 100k-400k vectors, one HNSW insert costs 2-5 ms on two cores, more than the
encoder spends on the text (docs/benchmarks.md, "Write path and ingest"). A batch of at least
VECTOR_INDEX_BEHIND_MIN rows therefore stores its rows with vector_indexed false: the partial
index (memory_embedding_half_hnsw, WHERE vector_indexed) skips them, and the import returns at
the encoder's pace. They are found at once: every walk of the index also scans the namespace's
rows outside it exactly (apps/memories/nearest.py), which the partial index memory_ns_unindexed
keeps cheap. The vector_index job then adds them, SLICE rows to a transaction, through the
worker or the server's scheduler.

The exact scan bounds what may wait: at most VECTOR_INDEX_BEHIND_MAX rows of one namespace
(about 10 ms more a walk at 5,000 rows, docs/jobs.md). A batch that would pass it is
indexed as it is written, as every single write is. Each batch counts what waits in its own
transaction, so writers running at once may pass the bound by a batch each.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings
from django.db import connection, transaction

from .models import Memory, Namespace

SLICE = 256


def waiting(namespace_ids: Iterable[int] | None = None) -> int:
    """How many rows wait outside the HNSW index (in these namespaces), one count through the
    partial index memory_ns_unindexed."""
    rows = Memory.every_state.filter(vector_indexed=False)
    if namespace_ids is not None:
        rows = rows.filter(namespace_id__in=list(namespace_ids))
    return rows.count()


def write_behind(namespace_id: int, rows: int) -> bool:
    """Whether a batch of `rows` new rows goes in outside the index: a large batch, while the
    namespace's rows outside stay within the bound."""
    if rows < settings.VECTOR_INDEX_BEHIND_MIN:
        return False
    return waiting([namespace_id]) + rows <= settings.VECTOR_INDEX_BEHIND_MAX


def health() -> dict:
    """For /healthz: rows waiting for the vector_index job, over every namespace."""
    return {"rows_waiting": waiting()}


def index_waiting(namespace: Namespace, **options) -> dict:
    """The vector_index job: add the namespace's rows outside the HNSW index to it, SLICE rows
    to a transaction, until none waits. Rows another run or a writer holds are skipped, not
    waited for. Only the flag changes: no revision, no new version (nothing a user wrote)."""
    added = 0
    table = Memory._meta.db_table
    while True:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                f"""
                UPDATE {table} SET vector_indexed = true
                 WHERE id IN (SELECT id FROM {table}
                               WHERE namespace_id = %s AND NOT vector_indexed
                               LIMIT %s FOR UPDATE SKIP LOCKED)
                """,
                [namespace.pk, SLICE],
            )
            done = cursor.rowcount
        if not done:
            return {"rows_indexed": added}
        added += done
