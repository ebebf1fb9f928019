"""The near-duplicate job: per namespace, every live memory's few nearest neighbours through the
HNSW index (a lateral KNN query with a small LIMIT), kept when cosine similarity reaches
NEAR_DUPLICATE_THRESHOLD. Pairs already stored, whatever their status, are left alone, so a
curator's "keep both" is final and running the job twice adds nothing.

`recent=True` compares only the memories changed since the last run with all the others: the
in-server scheduler does that every minute, so a pair shows soon after its write, and the whole
namespace once a day. "Changed" is read from the history (a revision is stamped when it is
written; a memory's own `updated_at` may come from an imported file). A JobCursor per namespace
keeps the position, set behind the oldest transaction still open when the run started, so a long
import that commits after the run is still seen by the next one.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from apps.history.models import MemoryRevision
from apps.jobs.models import Job, JobCursor
from apps.jobs.services import register_job
from apps.memories import nearest
from apps.memories.models import Memory, Namespace

from .models import DuplicatePair

NEAR_DUPLICATES_JOB = Job.NEAR_DUPLICATES
NEIGHBOURS = 5
# Margin for clocks and for a revision stamped a moment before its transaction wrote anything;
# and the farthest back a recent run looks (a transaction left open for hours is not waited for).
RECENT_MARGIN = timedelta(seconds=30)
RECENT_LOOKBACK_MAX = timedelta(hours=1)

# Up to this many memories a namespace is compared exactly (a sequential scan per memory, a few
# seconds at most); above it each memory's neighbours come from the shared HNSW index
# (apps/memories/nearest.py). Lower than search's limit: this compares every pair.
EXACT_SCAN_MAX = 2_000

_PAIRS_SQL = """
SELECT DISTINCT least(m.id, n.id), greatest(m.id, n.id), 1 - (m.embedding <=> n.embedding)
FROM {table} m
CROSS JOIN LATERAL (
    SELECT o.id, o.embedding FROM {table} o
    WHERE o.namespace_id = m.namespace_id AND NOT o.archived AND o.embedding IS NOT NULL
      AND o.id <> m.id
    ORDER BY {order}
    LIMIT {neighbours}
) n
WHERE m.namespace_id = %s AND NOT m.archived AND m.embedding IS NOT NULL
  AND {which} AND 1 - (m.embedding <=> n.embedding) >= %s
"""


def near_duplicate_pairs(
    namespace: Namespace, threshold: float, *, changed_since=None
) -> list[tuple]:
    """(first id, second id, similarity) with first < second, for pairs at or above threshold;
    with `changed_since`, only pairs with a memory updated after it."""
    with transaction.atomic(), connection.cursor() as cursor:
        walk = nearest.larger_than(cursor, namespace.pk, EXACT_SCAN_MAX)
        if walk:
            nearest.prepare_walk(cursor)
        order = nearest.order_by("o.embedding", "m.embedding", walk_index=walk)
        # Every pair is met from both ends, so the whole namespace keeps one (m < n); a recent
        # memory's pairs are kept from its end, whichever id is smaller.
        which = "m.id < n.id"
        if changed_since is not None:
            which = (
                f"m.id IN (SELECT memory_id FROM {MemoryRevision._meta.db_table}"
                " WHERE namespace_id = %s AND created_at > %s)"
            )
        sql = _PAIRS_SQL.format(
            table=Memory._meta.db_table, order=order, neighbours=NEIGHBOURS, which=which
        )
        params = [namespace.pk, threshold]
        if changed_since is not None:
            params[1:1] = [namespace.pk, changed_since]
        cursor.execute(sql, params)
        return cursor.fetchall()


def near_duplicates_update(namespace: Namespace, recent: bool = False, **options) -> dict:
    position = _safe_position()
    cursor_row = JobCursor.objects.filter(job=Job.NEAR_DUPLICATES, namespace=namespace).first()
    since = cursor_row.position if (recent and cursor_row) else None
    found = near_duplicate_pairs(namespace, settings.NEAR_DUPLICATE_THRESHOLD, changed_since=since)
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
        if recent or cursor_row is None or cursor_row.position < position:
            JobCursor.objects.update_or_create(
                job=Job.NEAR_DUPLICATES, namespace=namespace, defaults={"position": position}
            )
    return {"pairs_found": len(found), "pairs_added": added}


def _safe_position():
    """Every change stamped after this is either visible now or not yet committed: the start
    of the oldest transaction still open (less a margin), at most RECENT_LOOKBACK_MAX back."""
    now = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT min(xact_start) FROM pg_stat_activity WHERE datname = current_database()"
            " AND pid <> pg_backend_pid() AND xact_start IS NOT NULL"
        )
        oldest = cursor.fetchone()[0]
    position = min(now, oldest or now) - RECENT_MARGIN
    return max(position, now - RECENT_LOOKBACK_MAX)


def register() -> None:
    register_job(NEAR_DUPLICATES_JOB, near_duplicates_update)
