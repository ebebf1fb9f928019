"""The near-duplicate job: per namespace, every live memory's few nearest neighbours through the
HNSW index (a lateral KNN query with a small LIMIT), kept when cosine similarity reaches
NEAR_DUPLICATE_THRESHOLD. Pairs already stored, whatever their status, are left alone, so a
curator's "keep both" is final and running the job twice adds nothing."""

from __future__ import annotations

from django.conf import settings
from django.db import connection, transaction

from apps.jobs.models import Job
from apps.memories import nearest
from apps.memories.models import Memory, Namespace

from .models import DuplicatePair

NEAR_DUPLICATES_JOB = Job.NEAR_DUPLICATES
NEIGHBOURS = 5

# Up to this many memories a namespace is compared exactly (a sequential scan per memory, a few
# seconds at most); above it each memory's neighbours come from the shared HNSW index
# (apps/memories/nearest.py). Lower than search's limit: this compares every pair.
EXACT_SCAN_MAX = 2_000

_PAIRS_SQL = """
SELECT m.id, n.id, 1 - (m.embedding <=> n.embedding)
FROM {table} m
CROSS JOIN LATERAL (
    SELECT o.id, o.embedding FROM {table} o
    WHERE o.namespace_id = m.namespace_id AND NOT o.archived AND o.embedding IS NOT NULL
      AND o.id <> m.id
    ORDER BY {order}
    LIMIT {neighbours}
) n
WHERE m.namespace_id = %s AND NOT m.archived AND m.embedding IS NOT NULL
  AND m.id < n.id AND 1 - (m.embedding <=> n.embedding) >= %s
"""


def near_duplicate_pairs(namespace: Namespace, threshold: float) -> list[tuple]:
    """(first id, second id, similarity) with first < second, for pairs at or above threshold."""
    with transaction.atomic(), connection.cursor() as cursor:
        walk = nearest.larger_than(cursor, namespace.pk, EXACT_SCAN_MAX)
        if walk:
            nearest.prepare_walk(cursor)
        order = nearest.order_by("o.embedding", "m.embedding", walk_index=walk)
        sql = _PAIRS_SQL.format(table=Memory._meta.db_table, order=order, neighbours=NEIGHBOURS)
        cursor.execute(sql, [namespace.pk, threshold])
        return cursor.fetchall()


def near_duplicates_update(namespace: Namespace, **options) -> dict:
    found = near_duplicate_pairs(namespace, settings.NEAR_DUPLICATE_THRESHOLD)
    stored = DuplicatePair.objects.filter(namespace=namespace)
    with transaction.atomic():
        before = stored.count()
        DuplicatePair.objects.bulk_create(
            [
                DuplicatePair(namespace=namespace, first_id=a, second_id=b, similarity=s)
                for a, b, s in found
            ],
            ignore_conflicts=True,
        )
        added = stored.count() - before
    return {"pairs_found": len(found), "pairs_added": added}
