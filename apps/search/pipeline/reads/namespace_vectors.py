"""A small namespace's vectors kept in the process, for the exact semantic scans.

The exact scan of a namespace (reads/semantic.py) compares every memory and passage vector of
it with the query in PostgreSQL, about a microsecond a vector of executor work, twice a search
(the query, then the feedback vector). Here the same vectors are read once into numpy, and each
scan is a matrix product in the process.

A search must still see what any process wrote a moment before. Before each use, one
statement reads a fingerprint of the namespace's rows: for its memories and for its passages,
the count, the sum of the row versions' transaction ids (`xmin`) and the sum of a hash of their
places (`ctid`). Any insert, update or delete (archiving, a review, a validity change, a new
embedding; the access statistics job too) writes a new row version, with a new `xmin` and a new
place (a transaction that changes a row it wrote itself keeps the `xmin`, not the place), so
the fingerprint changes and the vectors are read again. The fingerprint is read in one
statement, so it shows one moment, like the scan it replaces; each table's vectors are kept
with the fingerprint of the rows they were read from. Inside `checked_once()` (one search's
retrieval) the namespace is checked once, at its first scan, and the feedback scan that
follows reads the same vectors. A counter bumped by a trigger would have served as well but
would serialise a namespace's writers on one row until they commit; a watermark by time or
sequence would miss a transaction that commits after a later one.

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
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np
import numpy.typing as npt
from django.conf import settings

from apps.vectors.nearest import vector_from_binary

# Raw SQL reads go where the router sends reads (the replica, when one is configured).
from memoryhub.replica.routing import read_connection as connection

from ..scope import MEMORY, PASSAGE, Scope

Fingerprint = tuple[int, int, int]
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_NEVER_BEFORE = np.iinfo(np.int64).min
_NEVER_AFTER = np.iinfo(np.int64).max

# A row version's marks: the transaction that wrote it and where it lies (an update inside
# the transaction that wrote the row keeps xmin but moves the row).
_XMIN = "xmin::text::bigint"
_PLACE = "hashtext(ctid::text)"
# count, sum of xmin, sum of the places' hashes: one row per table, read at one moment.
_PRINT = (
    f"SELECT count(*), coalesce(sum({_XMIN}), 0), coalesce(sum({_PLACE}), 0) "
    "FROM {table} WHERE namespace_id = %s"
)
FINGERPRINT_SQL = (
    f"SELECT * FROM ({_PRINT.format(table=MEMORY)}) m, ({_PRINT.format(table=PASSAGE)}) p"
)
# Microseconds since the epoch, exact (extract returns numeric), for comparisons in numpy.
_MICROS = "(extract(epoch FROM {column}) * 1000000)::bigint"
MEMORIES_SQL = (
    f"SELECT m.id::text, vector_send(m.embedding), {_MICROS.format(column='m.valid_from')}, "
    f"{_MICROS.format(column='m.valid_until')}, {_MICROS.format(column='m.created_at')}, "
    "NOT m.archived AND m.review = 'approved' AND m.embedding IS NOT NULL, "
    f"{_XMIN}, {_PLACE} FROM {MEMORY} m WHERE m.namespace_id = %s"
)
PASSAGES_SQL = (
    "SELECT p.memory_id::text, vector_send(p.embedding), p.previous_id IS NULL, "
    f"{_XMIN}, {_PLACE} FROM {PASSAGE} p WHERE p.namespace_id = %s"
)


@dataclass(frozen=True)
class Memories:
    """The namespace's memories that a search may find (not archived, approved, embedded)."""

    fingerprint: Fingerprint
    ids: list[str]
    vectors: npt.NDArray[np.float32]  # unit rows
    valid_from: npt.NDArray[np.int64]  # microseconds; _NEVER_BEFORE when open
    valid_until: npt.NDArray[np.int64]  # _NEVER_AFTER when open
    created: npt.NDArray[np.int64]


@dataclass(frozen=True)
class Passages:
    """The namespace's passages whose memory a search may find, by that memory's row."""

    fingerprint: Fingerprint
    owner: npt.NDArray[np.intp]  # index into Memories.ids
    vectors: npt.NDArray[np.float32]
    sentence: npt.NDArray[np.bool_]  # a sentence of its memory, not a previous-turn pair

    @property
    def rows(self) -> int:
        return len(self.owner)


@dataclass(frozen=True)
class NamespaceVectors:
    memories: Memories
    passages: Passages

    @property
    def rows(self) -> int:
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
    scores = _scores(kept, vector, passages is not None, sentence_only)
    usable = _in_scope(kept.memories, scope)
    return _best(kept.memories.ids, scores, usable, limit)


def forget() -> None:
    """Drop every kept namespace (tests, and a process that wants its memory back)."""
    with _lock:
        _kept.clear()


def _current(namespace_id: int, budget: int) -> NamespaceVectors | None:
    """The namespace's vectors as the database holds them now, read again when the
    fingerprint moved; None when the namespace has more rows than the budget."""
    with connection.cursor() as cursor:
        cursor.execute(FINGERPRINT_SQL, [namespace_id, namespace_id])
        row = cursor.fetchone()
    memories_print, passages_print = tuple(row[:3]), tuple(row[3:])
    if memories_print[0] + passages_print[0] > budget:
        return None
    with _lock:
        kept = _kept.get(namespace_id)
        if kept is not None:
            _kept.move_to_end(namespace_id)
    if kept is not None and kept.memories.fingerprint == memories_print:
        if kept.passages.fingerprint == passages_print:
            return kept
        memories = kept.memories
    else:
        memories = _read_memories(namespace_id)
    kept = NamespaceVectors(memories, _read_passages(namespace_id, memories))
    if kept.memories.fingerprint != memories_print:
        return None  # a write came between the two reads: this search scans in SQL
    _keep(namespace_id, kept, budget)
    return kept if kept.passages.fingerprint == passages_print else None


def _keep(namespace_id: int, kept: NamespaceVectors, budget: int) -> None:
    with _lock:
        _kept[namespace_id] = kept
        _kept.move_to_end(namespace_id)
        total = sum(v.rows for v in _kept.values())
        while total > budget and len(_kept) > 1:
            _, dropped = _kept.popitem(last=False)
            total -= dropped.rows


def _read_memories(namespace_id: int) -> Memories:
    with connection.cursor() as cursor:
        cursor.execute(MEMORIES_SQL, [namespace_id])
        rows = cursor.fetchall()
    fingerprint = (len(rows), sum(r[6] for r in rows), sum(r[7] for r in rows))
    usable = [r for r in rows if r[5]]
    return Memories(
        fingerprint=fingerprint,
        ids=[r[0] for r in usable],
        vectors=_unit_rows([r[1] for r in usable]),
        valid_from=np.array([_NEVER_BEFORE if r[2] is None else r[2] for r in usable], np.int64),
        valid_until=np.array([_NEVER_AFTER if r[3] is None else r[3] for r in usable], np.int64),
        created=np.array([r[4] for r in usable], np.int64),
    )


def _read_passages(namespace_id: int, memories: Memories) -> Passages:
    with connection.cursor() as cursor:
        cursor.execute(PASSAGES_SQL, [namespace_id])
        rows = cursor.fetchall()
    fingerprint = (len(rows), sum(r[3] for r in rows), sum(r[4] for r in rows))
    row_of = {memory_id: i for i, memory_id in enumerate(memories.ids)}
    found = [(row_of[r[0]], r) for r in rows if r[0] in row_of]
    return Passages(
        fingerprint=fingerprint,
        owner=np.array([i for i, _ in found], dtype=np.intp),
        vectors=_unit_rows([r[1] for _, r in found]),
        sentence=np.array([bool(r[2]) for _, r in found], dtype=np.bool_),
    )


def _unit_rows(blobs: list[bytes]) -> npt.NDArray[np.float32]:
    """pgvector's binary values as unit rows (a zero vector stays zero and scores 0)."""
    if not blobs:
        return np.zeros((0, 0), dtype=np.float32)
    matrix = np.stack([vector_from_binary(b) for b in blobs])
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.where(norms > 0, norms, 1.0)).astype(np.float32)


def _scores(
    kept: NamespaceVectors, vector: np.ndarray, with_passages: bool, sentence_only: bool
) -> npt.NDArray[np.float64]:
    """Each memory's similarity as the SQL scan computes it."""
    memories, passages = kept.memories, kept.passages
    query = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(query))
    if norm > 0:
        query = query / norm
    if not memories.ids:
        return np.zeros(0)
    own = (memories.vectors @ query).astype(np.float64)
    if not with_passages:
        return own
    chosen = passages.sentence if sentence_only else slice(None)
    owner = passages.owner[chosen]
    best = np.full(len(own), -np.inf)
    if len(owner):
        np.maximum.at(best, owner, (passages.vectors[chosen] @ query).astype(np.float64))
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
