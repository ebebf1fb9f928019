"""A small namespace's vectors kept in the process, for the exact semantic scans.

The exact scan of a namespace (reads/semantic.py) compares every memory and passage vector of
it with the query in PostgreSQL, about a microsecond a vector of executor work, twice a search
(the query, then the feedback vector). Here the same vectors are read once into numpy, and each
scan is a matrix product in the process.

A search must still see what any process wrote a moment before. Every statement that changes a
namespace's memories (a column a search reads) or passages adds a row to a log, by triggers in
the writer's own transaction (migration memories 0029, model NamespaceChange). Before each use,
one statement reads the count and the largest id of the namespace's log rows, from an index.
A change committed since the vectors were read has added a row, whatever the order in which
transactions commit, so the pair moved and the vectors are read again (the prune that bounds
the log moves the namespace's newest row to a new id whenever it deletes others,
apps/memories/namespace_changes.py). Within a transaction, each of its statements adds a row
too. The pair is read before and after the vectors; when it moved in
between, this search scans in SQL. Inside `checked_once()` (one search's retrieval) the
namespace is checked once, at its first scan, and the feedback scan reads the same vectors.
A namespace that changes all the time (writers at work) is read again at most every
RELOAD_MIN_S seconds by a process; in between its searches scan in SQL. A per-namespace counter
would serialise a namespace's writers on one row until they commit; a fingerprint of the rows
themselves (count and sum of xmin) read every row of the namespace, as slow as the scan.

Only a whole namespace is kept (no filter beyond validity and "as of", which are columns
kept here too): a filtered scan stays in SQL. The process keeps at most
SEARCH_VECTOR_CACHE_ROWS vectors (memories and passages), the least recently used namespace
going first; a namespace larger than that is always scanned in SQL.

Scores are the SQL scan's: cosines of the vectors as stored (normalised here, as pgvector's
cosine does), a memory's best passage counting when it is higher than its own cosine, and a
memory with passages of its kind counting max(own, 0) otherwise (reads/semantic.py,
_namespace_nearest).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np
import numpy.typing as npt
from django.conf import settings

from apps.memories.models import NamespaceChange
from apps.vectors.nearest import vector_from_binary

# Raw SQL reads go where the router sends reads (the replica, when one is configured).
from memoryhub.replica.routing import read_connection as connection

from ..scope import MEMORY, PASSAGE, Scope

Fingerprint = tuple[int, int]  # the namespace's log rows: count, largest id
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_NEVER_BEFORE = np.iinfo(np.int64).min  # an open validity, below even '-infinity'
_NEVER_AFTER = np.iinfo(np.int64).max
RELOAD_MIN_S = 2.0
NAMESPACES_KEPT = 10_000

FINGERPRINT_SQL = (
    f"SELECT count(*), coalesce(max(id), 0) FROM {NamespaceChange._meta.db_table} "
    "WHERE namespace_id = %s"
)
ROWS_SQL = (
    f"SELECT (SELECT count(*) FROM {MEMORY} WHERE namespace_id = %s) "
    f"+ (SELECT count(*) FROM {PASSAGE} WHERE namespace_id = %s)"
)
# Microseconds since the epoch, exact (extract returns numeric), for comparisons in numpy;
# 'infinity' and '-infinity' (a row written by SQL) become the largest and smallest bigint
# (least and greatest would turn a null into a bound: a null stays null).
_MICROS = (
    "CASE WHEN {column} IS NOT NULL THEN least(greatest(extract(epoch FROM {column}) * 1000000, "
    "-9223372036854775807), 9223372036854775807)::bigint END"
)
# The memories a whole namespace's search may find: the scope's own clause (validity and "as
# of" are applied in numpy, per search, from the columns read here).
MEMORIES_SQL = (
    f"SELECT m.id::text, vector_send(m.embedding), {_MICROS.format(column='m.valid_from')}, "
    f"{_MICROS.format(column='m.valid_until')}, {_MICROS.format(column='m.created_at')} "
    f"FROM {MEMORY} m WHERE {{where}} AND m.embedding IS NOT NULL"
)
PASSAGES_SQL = (
    "SELECT p.memory_id::text, vector_send(p.embedding), p.previous_id IS NULL "
    f"FROM {PASSAGE} p WHERE p.namespace_id = %s"
)


@dataclass(frozen=True)
class Memories:
    """The namespace's memories that a search may find (not archived, approved, embedded)."""

    ids: list[str]
    vectors: npt.NDArray[np.float32]  # unit rows
    valid_from: npt.NDArray[np.int64]  # microseconds; _NEVER_BEFORE when open
    valid_until: npt.NDArray[np.int64]  # _NEVER_AFTER when open
    created: npt.NDArray[np.int64]


@dataclass(frozen=True)
class Groups:
    """Some of the passages, grouped by memory for np.maximum.reduceat: `rows` (into the
    passages; None: all of them) in order of their memory, each memory's first at `starts`."""

    rows: npt.NDArray[np.intp] | None
    starts: npt.NDArray[np.intp]
    owners: npt.NDArray[np.intp]  # the memory (index into Memories.ids) of each group

    @classmethod
    def of(cls, owner: npt.NDArray[np.intp], rows: npt.NDArray[np.intp] | None) -> Groups:
        owned = owner if rows is None else owner[rows]  # in order: passages are kept so
        starts = np.flatnonzero(np.r_[True, owned[1:] != owned[:-1]]) if len(owned) else owned
        return cls(rows, starts.astype(np.intp), owned[starts].astype(np.intp))


@dataclass(frozen=True)
class Passages:
    """The namespace's passages whose memory a search may find, in order of that memory's row;
    grouped by memory, all of them and the sentences only (without previous-turn pairs)."""

    vectors: npt.NDArray[np.float32]
    every: Groups
    sentences: Groups

    @property
    def rows(self) -> int:
        return len(self.vectors)


@dataclass(frozen=True)
class NamespaceVectors:
    fingerprint: Fingerprint
    loaded_at: float  # time.monotonic()
    memories: Memories | None  # None: more rows than the process keeps
    passages: Passages | None

    @property
    def rows(self) -> int:
        if self.memories is None or self.passages is None:
            return 0
        return len(self.memories.ids) + self.passages.rows


_kept: OrderedDict[int, NamespaceVectors] = OrderedDict()
_lock = threading.Lock()
# Within checked_once(): namespace id -> what its one check found (None: scan in SQL).
_checked: ContextVar[dict[int, NamespaceVectors | None] | None] = ContextVar(
    "namespace_vectors_checked", default=None
)


@contextmanager
def checked_once() -> Iterator[None]:
    """The scans inside read each namespace's fingerprint once, at the first of them."""
    token = _checked.set({})
    try:
        yield
    finally:
        _checked.reset(token)


def nearest(
    scope: Scope, vector: np.ndarray, limit: int, passages: str | None, sentence_only: bool
) -> list[tuple[str, float]] | None:
    """The exact scan's rows (id, similarity), best first, from the process's copy of the
    namespace's vectors; None when this scope or namespace is left to SQL (a filter, or more
    rows than the process keeps). `passages`: whether passages count; `sentence_only`: only
    a memory's sentences, not its previous-turn pair."""
    budget = int(settings.SEARCH_VECTOR_CACHE_ROWS)
    if budget <= 0 or scope.filtered:
        return None
    checked = _checked.get()
    if checked is not None and scope.namespace_id in checked:
        kept = checked[scope.namespace_id]
    else:
        kept = _current(scope.namespace_id, budget)
        if checked is not None:
            checked[scope.namespace_id] = kept
    if kept is None:
        return None
    assert kept.memories is not None and kept.passages is not None  # _current returns these
    scores = _scores(kept.memories, kept.passages, vector, passages is not None, sentence_only)
    usable = _in_scope(kept.memories, scope)
    return _best(kept.memories.ids, scores, usable, limit)


def _current(namespace_id: int, budget: int) -> NamespaceVectors | None:
    """The namespace's vectors as the database holds them now, read again when its log moved;
    None when this search scans in SQL (too many rows, or the namespace changing meanwhile)."""
    now = _fingerprint(namespace_id)
    with _lock:
        kept = _kept.get(namespace_id)
        if kept is not None:
            _kept.move_to_end(namespace_id)
    if kept is not None and (
        kept.fingerprint == now or time.monotonic() - kept.loaded_at < RELOAD_MIN_S
    ):
        return kept if kept.fingerprint == now and kept.memories is not None else None
    memories = passages = None
    if _rows(namespace_id) <= budget:
        memories = _read_memories(namespace_id)
        passages = _read_passages(namespace_id, memories)
    if _fingerprint(namespace_id) != now:
        return None  # changed while it was read: read again at the next search
    # Over the budget, it is noted as such: the next search does not count it again.
    kept = NamespaceVectors(now, time.monotonic(), memories, passages)
    _keep(namespace_id, kept, budget)
    return kept if kept.memories is not None else None


def _fingerprint(namespace_id: int) -> Fingerprint:
    with connection.cursor() as cursor:
        cursor.execute(FINGERPRINT_SQL, [namespace_id])
        count, largest = cursor.fetchone()
    return int(count), int(largest)


def _keep(namespace_id: int, kept: NamespaceVectors, budget: int) -> None:
    with _lock:
        _kept[namespace_id] = kept
        _kept.move_to_end(namespace_id)
        total = sum(v.rows for v in _kept.values())
        # Over the rows' budget, or too many namespaces noted (one too large keeps no rows).
        while (total > budget or len(_kept) > NAMESPACES_KEPT) and len(_kept) > 1:
            _, dropped = _kept.popitem(last=False)
            total -= dropped.rows


def _rows(namespace_id: int) -> int:
    """The vectors the namespace would keep: its memories and passages (read from indexes)."""
    with connection.cursor() as cursor:
        cursor.execute(ROWS_SQL, [namespace_id, namespace_id])
        return int(cursor.fetchone()[0])


def _read_memories(namespace_id: int) -> Memories:
    with connection.cursor() as cursor:
        where, params = Scope(namespace_id=namespace_id).where()
        cursor.execute(MEMORIES_SQL.format(where=where), params)
        rows = cursor.fetchall()
    return Memories(
        ids=[r[0] for r in rows],
        vectors=_unit_rows([r[1] for r in rows]),
        valid_from=np.array([_NEVER_BEFORE if r[2] is None else r[2] for r in rows], np.int64),
        valid_until=np.array([_NEVER_AFTER if r[3] is None else r[3] for r in rows], np.int64),
        created=np.array([r[4] for r in rows], np.int64),
    )


def _read_passages(namespace_id: int, memories: Memories) -> Passages:
    with connection.cursor() as cursor:
        cursor.execute(PASSAGES_SQL, [namespace_id])
        rows = cursor.fetchall()
    row_of = {memory_id: i for i, memory_id in enumerate(memories.ids)}
    found = sorted(((row_of[r[0]], r) for r in rows if r[0] in row_of), key=lambda f: f[0])
    owner = np.array([i for i, _ in found], dtype=np.intp)
    sentence = np.array([bool(r[2]) for _, r in found], dtype=np.bool_)
    return Passages(
        vectors=_unit_rows([r[1] for _, r in found]),
        every=Groups.of(owner, None),
        sentences=Groups.of(owner, np.flatnonzero(sentence).astype(np.intp)),
    )


def _unit_rows(blobs: list[bytes]) -> npt.NDArray[np.float32]:
    """pgvector's binary values as unit rows (a zero vector stays zero and scores 0)."""
    if not blobs:
        return np.zeros((0, 0), dtype=np.float32)
    matrix = np.stack([vector_from_binary(b) for b in blobs])
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.where(norms > 0, norms, 1.0)).astype(np.float32)


def _scores(
    memories: Memories,
    passages: Passages,
    vector: np.ndarray,
    with_passages: bool,
    sentence_only: bool,
) -> npt.NDArray[np.float64]:
    """Each memory's similarity as the SQL scan computes it."""
    query = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(query))
    if norm > 0:
        query = query / norm
    if not memories.ids:
        return np.zeros(0)
    own = (memories.vectors @ query).astype(np.float64)
    if not with_passages:
        return own
    groups = passages.sentences if sentence_only else passages.every
    best = np.full(len(own), -np.inf)
    if len(groups.owners):
        scored = (passages.vectors @ query).astype(np.float64)  # all, then the kind's rows
        chosen = scored if groups.rows is None else scored[groups.rows]
        best[groups.owners] = np.maximum.reduceat(chosen, groups.starts)
    has_passage = np.isfinite(best)
    return np.where(has_passage, np.maximum(own, best), np.maximum(own, 0.0))


def _in_scope(memories: Memories, scope: Scope) -> npt.NDArray[np.bool_]:
    """Validity at the search's moment and, for an "as of" search, stored by then."""
    usable = np.ones(len(memories.ids), dtype=np.bool_)
    if scope.valid_at is not None:
        at = _micros(scope.valid_at)
        usable &= (memories.valid_until > at) & (memories.valid_from <= at)
    if scope.learnt_by is not None:
        usable &= memories.created <= _micros(scope.learnt_by)
    return usable


def _micros(moment: datetime) -> int:
    return (moment - _EPOCH) // _MICROSECOND


def _best(
    ids: list[str], scores: npt.NDArray[np.float64], usable: npt.NDArray[np.bool_], limit: int
) -> list[tuple[str, float]]:
    candidates = np.flatnonzero(usable)
    if len(candidates) > limit:
        top = np.argpartition(-scores[candidates], limit - 1)[:limit]
        candidates = candidates[top]
    order = candidates[np.argsort(-scores[candidates], kind="stable")]
    return [(ids[i], float(scores[i])) for i in order]
