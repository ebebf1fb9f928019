"""Reads of the curator's queues: open near-duplicate pairs and open conflicts, with the counts
the navigation shows. Everything is aggregated in SQL (no per-row queries, no embedding)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import connection

from apps.history.diff import word_diff
from apps.memories.models import CausalEdge, Memory, Namespace, PossibleUpdate, Relation
from apps.search.models import QueryLog

from .models import ConflictDecision, DuplicatePair, PairStatus

# --- near-duplicates ---------------------------------------------------------------------------


def open_pairs(namespace: Namespace):
    """Undecided pairs whose two memories are both live, most similar first."""
    return (
        DuplicatePair.objects.filter(
            namespace=namespace,
            status=PairStatus.OPEN,
            first__archived=False,
            second__archived=False,
        )
        .select_related("first", "second")
        .prefetch_related("first__tags", "second__tags")
        .order_by("-similarity", "id")
    )


def duplicate_count(*, namespace: Namespace) -> int:
    return open_pairs(namespace).count()


def side_by_side(first: str, second: str) -> tuple[list, list]:
    """A word-level diff (stdlib difflib, via the history's word_diff) split into the left text
    (equal and deleted words) and the right text (equal and inserted words)."""
    left, right = [], []
    for op, text in word_diff(first, second):
        if op in ("equal", "delete"):
            left.append((op, text))
        if op in ("equal", "insert"):
            right.append((op, text))
    return left, right


# --- conflicts ---------------------------------------------------------------------------------


@dataclass
class Conflict:
    first: Memory
    second: Memory
    linked: bool  # joined by a `contradicts` link
    flagged: int  # how many searches flagged the pair
    last_flagged: datetime | None
    # Noticed at write time as a possible update or a negation of the other: the newer
    # memory's id, why, and which of the two (PossibleUpdate.Kind) it is (else None).
    newer_id: str | None = None
    why: str = ""
    noticed_as: str | None = None

    @property
    def is_update(self) -> bool:
        """Offered for a supersede: noticed as an update, never as a negation."""
        return self.noticed_as == PossibleUpdate.Kind.UPDATE

    @property
    def newer(self) -> Memory | None:
        return next((m for m in (self.first, self.second) if str(m.pk) == self.newer_id), None)

    @property
    def older(self) -> Memory | None:
        newer = self.newer
        return None if newer is None else (self.second if newer is self.first else self.first)


# Candidate pairs: `contradicts` links, and pairs searches flagged (QueryLog.contradictions, read
# through its partial index, so searches without flags cost nothing here), minus decided pairs
# and pairs with an archived or deleted memory. Unordered pairs are keyed (least, greatest).
_CONFLICTS_SQL = """
WITH flagged AS (
    SELECT least((p->>0)::uuid, (p->>1)::uuid) AS a, greatest((p->>0)::uuid, (p->>1)::uuid) AS b,
           count(*) AS n, max(q.created_at) AS last
    FROM {log} q CROSS JOIN LATERAL jsonb_array_elements(q.contradictions) AS p
    WHERE q.namespace_id = %(ns)s AND q.contradictions <> '[]'::jsonb
    GROUP BY 1, 2
), linked AS (
    SELECT DISTINCT least(source_id, target_id) AS a, greatest(source_id, target_id) AS b
    FROM {edge} WHERE namespace_id = %(ns)s AND relation = %(rel)s
), updates AS (
    -- possible updates (and negations) noticed at write time, until one supersedes the
    -- other; one row per unordered pair, whichever side was written first
    SELECT DISTINCT ON (1, 2) least(u.newer_id, u.older_id) AS a,
           greatest(u.newer_id, u.older_id) AS b, u.newer_id AS newer, u.why AS why,
           u.kind AS kind
    FROM {update} u
    WHERE u.namespace_id = %(ns)s AND NOT EXISTS (
        SELECT 1 FROM {edge} s WHERE s.source_id = u.newer_id AND s.target_id = u.older_id
        AND s.relation = 'supersedes')
    ORDER BY 1, 2, u.found_at DESC
), both_kinds AS (
    SELECT coalesce(l.a, f.a) AS a, coalesce(l.b, f.b) AS b, l.a IS NOT NULL AS linked,
           coalesce(f.n, 0) AS n, f.last AS last
    FROM linked l FULL OUTER JOIN flagged f ON l.a = f.a AND l.b = f.b
), pairs AS (
    SELECT coalesce(k.a, u.a) AS a, coalesce(k.b, u.b) AS b, coalesce(k.linked, false) AS linked,
           coalesce(k.n, 0) AS n, k.last AS last, u.newer::text AS newer,
           coalesce(u.why, '') AS why, u.kind AS kind
    FROM both_kinds k FULL OUTER JOIN updates u ON k.a = u.a AND k.b = u.b
)
SELECT {select}
FROM pairs
JOIN {memory} m1 ON m1.id = pairs.a AND m1.namespace_id = %(ns)s AND NOT m1.archived
JOIN {memory} m2 ON m2.id = pairs.b AND m2.namespace_id = %(ns)s AND NOT m2.archived
WHERE NOT EXISTS (
    SELECT 1 FROM {decided} d WHERE d.first_id = pairs.a AND d.second_id = pairs.b
)
{tail}
"""


def _conflicts_sql(select: str, tail: str = "") -> str:
    return _CONFLICTS_SQL.format(
        log=QueryLog._meta.db_table,
        edge=CausalEdge._meta.db_table,
        memory=Memory._meta.db_table,
        decided=ConflictDecision._meta.db_table,
        update=PossibleUpdate._meta.db_table,
        select=select,
        tail=tail,
    )


def _params(namespace: Namespace, **extra) -> dict:
    return {"ns": namespace.pk, "rel": Relation.CONTRADICTS.value, **extra}


def open_conflicts(*, namespace: Namespace, limit: int = 50, offset: int = 0) -> list[Conflict]:
    """Open conflicts, linked ones first, then the most often flagged; memories loaded in one
    query."""
    return _conflicts(
        namespace,
        "ORDER BY pairs.linked DESC, pairs.n DESC, pairs.last DESC NULLS LAST, pairs.a, pairs.b "
        "LIMIT %(limit)s OFFSET %(offset)s",
        limit=limit,
        offset=offset,
    )


def _conflicts(namespace: Namespace, tail: str, **params) -> list[Conflict]:
    """The open conflicts the SQL's `tail` selects, their memories loaded in one query."""
    sql = _conflicts_sql(
        "pairs.a, pairs.b, pairs.linked, pairs.n, pairs.last, pairs.newer, pairs.why, pairs.kind",
        tail,
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, _params(namespace, **params))
        rows = cursor.fetchall()
    ids = {x for row in rows for x in row[:2]}
    memories = (
        Memory.objects.filter(namespace=namespace, pk__in=ids).prefetch_related("tags").in_bulk()
    )
    return [
        Conflict(memories[a], memories[b], linked, n, last, newer, why, kind)
        for a, b, linked, n, last, newer, why, kind in rows
        if a in memories and b in memories
    ]


@dataclass(frozen=True)
class OpenConflicts:
    """The open conflicts of a namespace as a sequence Django's Paginator pages: it counts them
    in one query and reads each page slice in another (open_conflicts)."""

    namespace: Namespace

    def count(self) -> int:
        return conflict_count(namespace=self.namespace)

    def __getitem__(self, window: slice) -> list[Conflict]:
        start = window.start or 0
        if window.stop <= start:
            return []  # an empty queue's only page
        return open_conflicts(namespace=self.namespace, limit=window.stop - start, offset=start)


def conflict_count(*, namespace: Namespace) -> int:
    with connection.cursor() as cursor:
        cursor.execute(_conflicts_sql("count(*)"), _params(namespace))
        return int(cursor.fetchone()[0])


def is_open_conflict(*, namespace: Namespace, first: Memory, second: Memory) -> bool:
    a, b = sorted([first.pk, second.pk], key=str)
    sql = _conflicts_sql("1", "AND pairs.a = %(a)s AND pairs.b = %(b)s")
    with connection.cursor() as cursor:
        cursor.execute(sql, _params(namespace, a=a, b=b))
        return cursor.fetchone() is not None


def noticed_for(memory: Memory) -> list[Conflict]:
    """The open conflicts noticed when `memory` was written (possible updates of older memories
    and negations of them), for its page: gone once superseded, decided or archived."""
    tail = "AND pairs.newer = %(newer)s ORDER BY pairs.a, pairs.b"
    return _conflicts(memory.namespace, tail, newer=str(memory.pk))
