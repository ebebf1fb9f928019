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

Bounded work: each statement compares at most SLICE memories in a transaction of its own, and a
recent run at most RECENT_MAX changed memories; after a bulk import of 100k the next runs work
the rest off in order (the cursor then also holds the last memory id compared, since one import
stamps its revisions alike). One statement over a whole 413k namespace ran for minutes.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from apps.history.models import MemoryRevision
from apps.jobs.models import Job, JobCursor
from apps.jobs.services import register_job
from apps.memories.models import Memory, Namespace
from apps.memories.neighbours import larger_than
from apps.vectors import nearest

from .models import DuplicatePair

NEAR_DUPLICATES_JOB = Job.NEAR_DUPLICATES
NEIGHBOURS = 5
# Margin for clocks and for a revision stamped a moment before its transaction wrote anything;
# and the farthest back a recent run looks (a transaction left open for hours is not waited for).
RECENT_MARGIN = timedelta(seconds=30)
RECENT_LOOKBACK_MAX = timedelta(hours=1)

# Up to this many memories a namespace is compared exactly (a sequential scan per memory, a few
# seconds at most); above it each memory's neighbours come from the shared HNSW index
# (apps/vectors/nearest.py). Lower than search's limit: this compares every pair.
EXACT_SCAN_MAX = 2_000

# A run compares at most this many memories per statement, each statement in a transaction of
# its own, so a namespace of 400k memories is never one statement of many minutes. A recent run
# takes at most RECENT_MAX changed memories; a bulk import's are worked off over the next runs.
SLICE = 1_000
RECENT_MAX = 10_000

_NEIGHBOURS_SQL = (
    "SELECT o.id, o.embedding FROM {table} o "
    "WHERE o.namespace_id = m.namespace_id AND NOT o.archived AND o.review = 'approved' "
    "AND o.embedding IS NOT NULL "
    "AND o.id <> m.id"
)
_PAIRS_SQL = """
SELECT DISTINCT least(m.id, n.id), greatest(m.id, n.id), 1 - (m.embedding <=> n.embedding)
FROM {table} m
CROSS JOIN LATERAL ({neighbours}) n
WHERE m.namespace_id = %s AND NOT m.archived AND m.review = 'approved' AND m.embedding IS NOT NULL
  AND m.id = ANY(%s::uuid[]) {one_end} AND 1 - (m.embedding <=> n.embedding) >= %s
"""


def near_duplicate_pairs(
    namespace: Namespace, threshold: float, ids: list, *, one_end: bool = False
) -> list[tuple]:
    """(first id, second id, similarity) with first < second, for pairs at or above threshold
    that hold one of `ids`. `one_end`: only pairs met from their smaller id (a pass over the
    whole namespace meets every pair from both ends)."""
    if not ids:
        return []
    with transaction.atomic(), connection.cursor() as cursor:
        walk = larger_than(cursor, namespace.pk, EXACT_SCAN_MAX)
        if walk:
            nearest.prepare_walk(cursor)
        table = Memory._meta.db_table
        select, exact = _NEIGHBOURS_SQL.format(table=table), "o.embedding <=> m.embedding"
        if walk:
            # With the rows a large batch left outside the index (apps/vectors/nearest.py).
            index_order = nearest.order_by("o.embedding", "m.embedding", walk_index=True)
            neighbours = nearest.walk_or_scan(
                select, "o", index_order, exact, str(NEIGHBOURS),
                union_order="u.embedding <=> m.embedding",
            )  # fmt: skip
        else:
            neighbours = f"{select} ORDER BY {exact} LIMIT {NEIGHBOURS}"
        sql = _PAIRS_SQL.format(
            table=table,
            neighbours=neighbours,
            one_end="AND m.id < n.id" if one_end else "",
        )
        cursor.execute(sql, [namespace.pk, [str(i) for i in ids], threshold])
        return cursor.fetchall()


def near_duplicates_update(namespace: Namespace, recent: bool = False, **options) -> dict:
    """Store the namespace's new near-duplicate pairs: of every live memory, or (`recent`) of
    the memories changed since the last run, at most RECENT_MAX of them."""
    position = _safe_position()
    cursor_row = JobCursor.objects.filter(job=Job.NEAR_DUPLICATES, namespace=namespace).first()
    if recent:
        return _recent(namespace, cursor_row, position)
    found = added = 0
    for ids in _slices(namespace):
        pairs = near_duplicate_pairs(
            namespace, settings.NEAR_DUPLICATE_THRESHOLD, ids, one_end=True
        )
        found, added = found + len(pairs), added + _store(namespace, pairs)
    if cursor_row is None or cursor_row.position < position:
        _move(namespace, position, None)
    return {"pairs_found": found, "pairs_added": added}


def _recent(namespace: Namespace, cursor_row: JobCursor | None, position) -> dict:
    """The memories changed after the cursor (all with a history when there is none), oldest
    change first; the cursor moves past the last one compared, never past `position`."""
    changed = _changed(namespace, cursor_row)
    taken, more = changed[:RECENT_MAX], len(changed) > RECENT_MAX
    found = added = 0
    for at in range(0, len(taken), SLICE):
        ids = [memory_id for memory_id, _ in taken[at : at + SLICE]]
        pairs = near_duplicate_pairs(namespace, settings.NEAR_DUPLICATE_THRESHOLD, ids)
        found, added = found + len(pairs), added + _store(namespace, pairs)
    if more and taken[-1][1] <= position:
        # Every change up to the last one compared is committed (the oldest open transaction
        # started after it): the next run goes on from there.
        last_id, last_at = taken[-1]
        _move(namespace, last_at, last_id)
    else:
        # All compared; or the rest may sit behind a transaction still open, in which case the
        # next run compares some memories again (a pair already stored is not added twice).
        _move(namespace, position, None)
    return {
        "pairs_found": found,
        "pairs_added": added,
        "compared": len(taken),
        "namespaces_behind": int(more),  # changed memories left for the next run
    }


def _changed(namespace: Namespace, cursor_row: JobCursor | None) -> list[tuple]:
    """(memory id, its latest change) after the cursor's (position, after_id), in that order,
    at most RECENT_MAX + 1 rows. "Changed" is read from the history: an imported memory's own
    updated_at may be years old."""
    table = MemoryRevision._meta.db_table
    where, having, params = "namespace_id = %s", "", [namespace.pk]
    if cursor_row is not None:
        where += " AND created_at >= %s"
        params.append(cursor_row.position)
        if cursor_row.after_id is None:
            having = "HAVING max(created_at) > %s"
            params.append(cursor_row.position)
        else:
            having = "HAVING (max(created_at), memory_id) > (%s, %s)"
            params += [cursor_row.position, cursor_row.after_id]
    sql = (
        f"SELECT memory_id, max(created_at) AS changed FROM {table} WHERE {where} "
        f"GROUP BY memory_id {having} ORDER BY changed, memory_id LIMIT %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params + [RECENT_MAX + 1])
        return cursor.fetchall()


def _slices(namespace: Namespace):
    """The ids of the namespace's live memories with a vector, SLICE at a time, by id."""
    rows = Memory.objects.filter(namespace=namespace, archived=False, embedding__isnull=False)
    after = None
    while True:
        page = rows.filter(pk__gt=after) if after else rows
        ids = list(page.order_by("pk").values_list("pk", flat=True)[:SLICE])
        if not ids:
            return
        yield ids
        after = ids[-1]


def _store(namespace: Namespace, pairs: list[tuple]) -> int:
    """Keep the new pairs (pairs already stored, whatever their status, are left alone);
    returns how many were new. Only these pairs are looked up, not the namespace's count,
    which a pass over a large namespace would read twice a slice."""
    found = {(a, b): s for a, b, s in pairs}
    if not found:
        return 0
    stored = set(
        DuplicatePair.objects.filter(first_id__in={a for a, _ in found}).values_list(
            "first_id", "second_id"
        )
    )
    new = [
        DuplicatePair(namespace=namespace, first_id=a, second_id=b, similarity=s)
        for (a, b), s in found.items()
        if (a, b) not in stored
    ]
    DuplicatePair.objects.bulk_create(new, ignore_conflicts=True)
    return len(new)


def _move(namespace: Namespace, position, after_id) -> None:
    JobCursor.objects.update_or_create(
        job=Job.NEAR_DUPLICATES,
        namespace=namespace,
        defaults={"position": position, "after_id": after_id},
    )


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
