"""A small namespace's vectors, rows, terms and links kept in the process, for the exact
semantic scans and most other reads of a search.

The exact scan of a namespace (reads/semantic.py) compares every memory and passage vector of
it with the query in PostgreSQL, about a microsecond a vector of executor work, twice a search
(the query, then the feedback vector). Here the same vectors are read once into numpy, and each
scan is a matrix product in the process. The row fetch (reads/rows.py) then reads its
candidates' cosines from the same products and the rest of their rows from the kept rows: the
columns the re-rankers read, tag names, whether their text asks (a question mark at its end),
and the keyword score, from each memory's stemmed terms (Lexicon; LexicalPlan.kept_scores
computes the SQL expression's doubles). The keyword strategy finds its hits and the plan its
terms' counts there too (keyword, document_frequencies), the graph walk its links
(edges_touching), the payload which kinds of link the namespace holds (edge_relations), and
the feedback seeds' and MMR head's stored vectors come from there (memories are kept as
stored, beside their inverse lengths). The context and co-activation stages read their
candidates' temporal neighbours from the namespace's timeline, every memory in time order
(temporal_rows).

A search must still see what any process wrote a moment before. Every statement that changes a
namespace's memories (a column a search reads), passages or links adds a row to a log, by
triggers in the writer's own transaction (migrations memories 0029 to 0033, model
NamespaceChange; the text, the full-text vector, the external id, the row fetch's columns, the
tag links and names and the links count, the usage counts do not). Before each use,
one statement reads the count and the largest id of the namespace's log rows, from an index
(for a query not stemmed before, the statement that stems it: fingerprint_beside).
A change committed since the vectors were read has added a row, whatever the order in which
transactions commit, so the pair moved and the vectors are read again (the prune that bounds
the log moves the namespace's newest row to a new id whenever it deletes others,
apps/memories/namespace_changes.py). Within a transaction, each of its statements adds a row
too. The pair is read before and after the vectors; when it moved in
between, this search scans in SQL. Inside `checked_once()` (one search) the namespace is
checked once, at its first use, and every later use reads the same vectors.
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
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
from django.conf import settings

from apps.memories.models import CausalEdge, NamespaceChange
from apps.memories.natural_order import natural_key
from apps.vectors.nearest import vector_from_binary

# Raw SQL reads go where the router sends reads (the replica, when one is configured).
from memoryhub.replica.routing import read_connection as connection

from ..scope import ASKS, MEMORY, PASSAGE, TAG_NAMES, Scope

# The keyword plan scores the kept rows itself (LexicalPlan.kept_scores).
if TYPE_CHECKING:
    from .lexical import LexicalPlan

Fingerprint = tuple[int, int]  # the namespace's log rows: count, largest id
Edge = tuple[str, str, str, float]  # source, target, relation, strength
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
# A row's place in the table (page, item), as one number: of several memories at one moment,
# an index on created_at returns them in this order (the timeline's ties, below).
_STORED = "(m.ctid::text::point)[0]::bigint * 65536 + (m.ctid::text::point)[1]::bigint"
# The memories a whole namespace's search may find: the scope's own clause (validity and "as
# of" are applied in numpy, per search, from the columns read here). Those without an
# embedding too: no scan finds them, but they are candidates' temporal neighbours (the
# timeline) as in SQL.
# Then the row fetch's columns (reads/rows.py: its KEPT_COLUMNS after the id), and the full-text
# vector's length, its terms, those of them in the title (weight A) and those in the tags or
# trigger phrases (B): what the keyword score reads (LexicalPlan.kept_scores). The stored
# vectors always have positions (migration memories 0003 writes them), so weights are known.
MEMORIES_SQL = (
    f"SELECT m.id::text, vector_send(m.embedding), {_MICROS.format(column='m.valid_from')}, "
    f"{_MICROS.format(column='m.valid_until')}, {_MICROS.format(column='m.created_at')}, "
    f"{TAG_NAMES}, {ASKS}, m.external_id, {_STORED}, m.created_at, m.file_path, m.tier, "
    "m.importance, m.stability, m.pagerank_score, length(m.search_vector), "
    "tsvector_to_array(m.search_vector), tsvector_to_array(ts_filter(m.search_vector, '{{a}}')), "
    "tsvector_to_array(ts_filter(m.search_vector, '{{b}}')) "
    f"FROM {MEMORY} m WHERE {{where}}"
)
# How many memories of the namespace hold each term: the keyword plan's document frequencies
# (reads/stats.py counts the same rows: not archived, whatever their review or validity).
# ts_stat takes its rows' query as text: the namespace's id is an integer, written in.
FREQUENCIES_SQL = (
    "SELECT word, ndoc FROM ts_stat('SELECT search_vector FROM " + MEMORY + " "
    "WHERE namespace_id = {namespace_id:d} AND NOT archived')"
)
# The namespace's links between memories, newest first (reads/edges.py reads them so).
EDGES_SQL = (
    "SELECT source_id::text, target_id::text, relation, strength "
    f"FROM {CausalEdge._meta.db_table} WHERE namespace_id = %s ORDER BY created_at DESC"
)
PASSAGES_SQL = (
    "SELECT p.memory_id::text, vector_send(p.embedding), p.previous_id IS NULL "
    f"FROM {PASSAGE} p WHERE p.namespace_id = %s"
)


@dataclass(frozen=True)
class Postings:
    """The kept memories (their rows in Memories, ascending) that hold one term, and whether it
    occurs in each one's title and in its tags or trigger phrases."""

    rows: npt.NDArray[np.intp]
    title: npt.NDArray[np.bool_]
    tags: npt.NDArray[np.bool_]


@dataclass(frozen=True)
class Lexicon:
    """Every term of the kept memories with its postings: one run of the arrays per term, in
    order of its code (built in numpy: a namespace holds a few hundred thousand of them)."""

    codes: dict[str, int]
    starts: npt.NDArray[np.intp]  # each code's first place in the arrays; one more at the end
    rows: npt.NDArray[np.intp]
    title: npt.NDArray[np.bool_]
    tags: npt.NDArray[np.bool_]

    def get(self, lexeme: str) -> Postings | None:
        code = self.codes.get(lexeme)
        if code is None:
            return None
        run = slice(int(self.starts[code]), int(self.starts[code + 1]))
        return Postings(self.rows[run], self.title[run], self.tags[run])

    @classmethod
    def of(cls, terms: list[tuple[list[str], list[str], list[str]]]) -> Lexicon:
        """From each kept memory's (terms, title terms, tag terms), in the memories' order."""
        every = [x for lexemes, _, _ in terms for x in lexemes]
        codes = {x: code for code, x in enumerate(dict.fromkeys(every))}
        flat = np.fromiter(map(codes.__getitem__, every), np.intp, len(every))
        owner = np.repeat(
            np.arange(len(terms), dtype=np.intp),
            np.fromiter((len(lexemes) for lexemes, _, _ in terms), np.intp, len(terms)),
        )
        # A term is in a memory's title (tags) when (memory, term) is among the title's pairs.
        keys = owner.astype(np.int64) * max(len(codes), 1) + flat
        title = np.isin(keys, _pairs(codes, [(row, t[1]) for row, t in enumerate(terms) if t[1]]))
        tags = np.isin(keys, _pairs(codes, [(row, t[2]) for row, t in enumerate(terms) if t[2]]))
        order = np.argsort(flat, kind="stable")  # each term's rows stay ascending
        starts = np.zeros(len(codes) + 1, dtype=np.intp)
        np.cumsum(np.bincount(flat, minlength=len(codes)), out=starts[1:])
        return cls(codes, starts, owner[order], title[order], tags[order])


def _pairs(codes: dict[str, int], chosen: list[tuple[int, list[str]]]) -> npt.NDArray[np.int64]:
    """(memory, term) pairs as Lexicon.of's keys: memory x the number of terms + the term."""
    width = max(len(codes), 1)
    return np.array([row * width + codes[x] for row, xs in chosen for x in xs], dtype=np.int64)


@dataclass(frozen=True)
class Memories:
    """The namespace's memories that a search may find (not archived, approved, embedded)."""

    ids: list[str]
    row_of: dict[str, int]  # id -> its index in ids
    vectors: npt.NDArray[np.float32]  # as stored (the head's embeddings are read from here)
    inverse_norms: npt.NDArray[np.float32]  # 1 / each row's length (0 for a zero vector)
    valid_from: npt.NDArray[np.int64]  # microseconds; _NEVER_BEFORE when open
    valid_until: npt.NDArray[np.int64]  # _NEVER_AFTER when open
    created: npt.NDArray[np.int64]
    tags: list[tuple[str, ...]]  # each memory's tag names (the row fetch reads them here)
    asks: list[bool]  # whether its text ends with a question mark
    # each memory's row fetch columns: created_at, external id, file path, tier, importance,
    # stability, PageRank score
    columns: list[RowColumns]
    lengths: npt.NDArray[np.float64]  # its full-text vector's length (NaN: none)
    lexicon: Lexicon  # the memories holding each term, for the keyword score
    frequencies: dict[str, int]  # each term's count of memories holding it (FREQUENCIES_SQL)
    edges: list[Edge]  # every link of the namespace, newest first (EDGES_SQL)
    # every memory a search may find, embedded or not: (id, created, valid_from, valid_until,
    # external id, place in the table), for the timeline
    every: list[tuple[str, int, int, int, str | None, int]]

    @cached_property
    def first_end(self) -> int:
        """The earliest end of validity among them (_NEVER_AFTER when none ends)."""
        return int(self.valid_until.min()) if len(self.valid_until) else _NEVER_AFTER

    @cached_property
    def edges_of(self) -> dict[str, list[int]]:
        """Each memory's links (their places in `edges`, newest first), either way."""
        found: dict[str, list[int]] = {}
        for at, (source, target, _, _) in enumerate(self.edges):
            found.setdefault(source, []).append(at)
            found.setdefault(target, []).append(at)
        return found

    @cached_property
    def relations(self) -> frozenset[str]:
        """The relations the namespace's links have."""
        return frozenset(relation for _, _, relation, _ in self.edges)

    @cached_property
    def id_order(self) -> npt.NDArray[np.intp]:
        """Each memory's place among them by id (a uuid's text sorts as the uuid does)."""
        order = np.empty(len(self.ids), dtype=np.intp)
        order[sorted(range(len(self.ids)), key=self.ids.__getitem__)] = np.arange(len(self.ids))
        return order

    @cached_property
    def timeline(self) -> Timeline:
        """Built at the first search that asks for temporal neighbours, once per read of the
        namespace (a sort by natural keys: ~25 ms for 25,000 memories)."""
        return Timeline.of(self.every)


@dataclass(frozen=True)
class Timeline:
    """Every memory a whole namespace's search may find (embedded or not) in coactivate's
    order: created_at, then the natural order of external ids, then id. The temporal
    neighbours' rows (reads/neighbours.py) are read from here: a range of it per timestamp."""

    ids: list[str]
    external_ids: list[str | None]
    position: dict[str, int]  # id -> its place in this order
    created: npt.NDArray[np.int64]  # ascending
    valid_from: npt.NDArray[np.int64]
    valid_until: npt.NDArray[np.int64]
    external: npt.NDArray[np.bool_]  # an external id (tied rows without one have no order)
    stored: npt.NDArray[np.int64]  # the row's place in the table when it was read

    @classmethod
    def of(cls, every: list[tuple[str, int, int, int, str | None, int]]) -> Timeline:
        ordered = sorted(every, key=lambda r: (r[1], natural_key(r[4]), r[0]))
        ids = [r[0] for r in ordered]
        return cls(
            ids=ids,
            external_ids=[r[4] for r in ordered],
            position={memory_id: i for i, memory_id in enumerate(ids)},
            created=np.array([r[1] for r in ordered], np.int64),
            valid_from=np.array([r[2] for r in ordered], np.int64),
            valid_until=np.array([r[3] for r in ordered], np.int64),
            external=np.array([r[4] is not None for r in ordered], np.bool_),
            stored=np.array([r[5] for r in ordered], np.int64),
        )

    def stored_first(self, place: int, usable: npt.NDArray[np.bool_], *, last: bool = False) -> int:
        """Of the usable memories at the moment of the one at `place`, the one stored first
        (`last`: last) in the table, as an index on created_at returns them."""
        moment = self.created[place]
        start = int(np.searchsorted(self.created, moment, side="left"))
        stop = int(np.searchsorted(self.created, moment, side="right"))
        if stop - start == 1:
            return place
        tied = np.flatnonzero(usable[start:stop]) + start
        stored = self.stored[tied]
        return int(tied[np.argmax(stored) if last else np.argmin(stored)])


RowColumns = tuple[datetime, str | None, str, str, float, float, float]


@dataclass(frozen=True)
class Facts:
    """The row fetch's columns of some memories, in the order asked for: the kept ones, the
    tag names, the question marks and the keyword score."""

    columns: list[RowColumns]
    tags: list[tuple[str, ...]]
    asks: list[bool]
    lexical: list[float]


@dataclass(frozen=True)
class Groups:
    """Some of the passages, grouped by memory for np.maximum.reduceat: `rows` (into the
    passages; None: all of them) in order of their memory, each memory's first at `starts`."""

    rows: npt.NDArray[np.intp] | None
    starts: npt.NDArray[np.intp]
    owners: npt.NDArray[np.intp]  # the memory (index into Memories.ids) of each group
    group_of: npt.NDArray[np.intp]  # each memory's group, -1 for a memory without one
    ends: npt.NDArray[np.intp]  # where each group stops (exclusive), beside `starts`

    @classmethod
    def of(
        cls, owner: npt.NDArray[np.intp], rows: npt.NDArray[np.intp] | None, memories: int
    ) -> Groups:
        owned = owner if rows is None else owner[rows]  # in order: passages are kept so
        starts = np.flatnonzero(np.r_[True, owned[1:] != owned[:-1]]) if len(owned) else owned
        starts = starts.astype(np.intp)
        owners = owned[starts].astype(np.intp)
        group_of = np.full(memories, -1, dtype=np.intp)
        group_of[owners] = np.arange(len(owners), dtype=np.intp)
        ends = np.r_[starts[1:], len(owned)].astype(np.intp)
        return cls(rows, starts, owners, group_of, ends)

    def best(
        self,
        scored: Callable[[npt.NDArray[np.intp]], npt.NDArray[np.float64]],
        memory_rows: npt.NDArray[np.intp],
    ) -> npt.NDArray[np.float64]:
        """The best passage score of each of these memories, 0 for one without passages of
        this kind (as the row fetch's passage cosine); `scored` scores passage rows."""
        best = np.zeros(len(memory_rows))
        groups = self.group_of[memory_rows]
        has = groups >= 0
        if not has.any():
            return best
        starts, ends = self.starts[groups[has]], self.ends[groups[has]]
        lengths = ends - starts
        offsets = np.r_[0, np.cumsum(lengths)[:-1]].astype(np.intp)
        # Every position of the chosen groups, one run of each group's after another.
        positions = np.repeat(starts - offsets, lengths) + np.arange(int(lengths.sum()))
        rows = positions if self.rows is None else self.rows[positions]
        best[has] = np.maximum.reduceat(scored(rows), offsets)
        return best


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


@dataclass
class _Search:
    """One search's use of the kept vectors (within checked_once())."""

    # namespace id -> what its one check found (None: scan in SQL)
    checked: dict[int, NamespaceVectors | None] = field(default_factory=dict)
    # (namespace id, "memories" or "passages", the query's bytes) -> every row's cosine: the
    # scans' products, which the row fetch reads its candidates' cosines from
    products: dict[tuple[int, str, bytes], npt.NDArray[np.float64]] = field(default_factory=dict)
    # namespace id -> its fingerprint, read by another statement of this search before the
    # first use (fingerprint_beside): the check then sends none of its own
    read_beside: dict[int, Fingerprint] = field(default_factory=dict)


_search: ContextVar[_Search | None] = ContextVar("namespace_vectors_search", default=None)


@contextmanager
def checked_once() -> Iterator[None]:
    """One search (services.search): its scans, row fetches and vector reads read each
    namespace's fingerprint once, at the first of them, and the fetches reuse the scans'
    cosines."""
    token = _search.set(_Search())
    try:
        yield
    finally:
        _search.reset(token)


def fingerprint_beside(scope: Scope | None) -> tuple[str, list[int]] | None:
    """A derived table (its count and largest id) that reads the fingerprint of the scope's
    namespace, for a statement the search sends anyway before its first use of the kept
    vectors (the query's stemming, reads/lexical.py): one round trip fewer. None when this
    search has no check left to make there (outside checked_once(), already checked, or a
    scope left to SQL). The caller hands the pair read to noted_beside()."""
    search = _search.get()
    if (
        scope is None
        or search is None
        or _left_to_sql(scope)
        or scope.namespace_id in search.checked
    ):
        return None
    return f"({FINGERPRINT_SQL})", [scope.namespace_id]


def noted_beside(scope: Scope, count: int, largest: int) -> None:
    """The fingerprint that fingerprint_beside()'s table read: the search's check of the
    namespace, at its first use, takes it instead of reading it again."""
    search = _search.get()
    if search is not None:
        search.read_beside[scope.namespace_id] = (int(count), int(largest))


def nearest(
    scope: Scope, vector: np.ndarray, limit: int, passages: str | None, sentence_only: bool
) -> list[tuple[str, float]] | None:
    """The exact scan's rows (id, similarity), best first, from the process's copy of the
    namespace's vectors; None when this scope or namespace is left to SQL (a filter, or more
    rows than the process keeps). `passages`: whether passages count; `sentence_only`: only
    a memory's sentences, not its previous-turn pair."""
    kept = _kept_for(scope)
    if kept is None:
        return None
    products = _Products(scope.namespace_id, kept, vector)
    scores = _scores(products, passages is not None, sentence_only)
    usable = _in_scope(kept.memories, scope)
    return _best(kept.memories.ids, scores, usable, limit)


def cosines(
    scope: Scope,
    ids: list[str],
    vectors: Mapping[str, np.ndarray],
    passages_of: np.ndarray | None = None,
    sentence_only: bool = False,
) -> dict[str, list[float]] | None:
    """Each memory's cosine to each named vector, in the order of `ids`, and under
    "passage", with `passages_of`, its best passage's cosine to that vector (0 without
    passages): the row fetch's evidence columns (reads/rows.py) from the kept vectors. None
    when the scope is left to SQL or one of the memories is not kept here (written since the
    check, archived, without an embedding): the row fetch then computes them itself."""
    kept = _kept_for(scope)
    rows = _rows_of(kept, ids) if kept is not None else None
    if kept is None or rows is None:
        return None
    out = {
        name: _Products(scope.namespace_id, kept, vector).memories(rows).tolist()
        for name, vector in vectors.items()
    }
    if passages_of is not None:
        products = _Products(scope.namespace_id, kept, passages_of)
        groups = kept.passages.sentences if sentence_only else kept.passages.every
        out["passage"] = groups.best(products.passages, rows).tolist()
    return out


def facts(scope: Scope, ids: list[str], plan: LexicalPlan | None) -> Facts | None:
    """The row fetch's columns of these memories from the kept rows (read with the vectors),
    and their keyword scores under `plan` (0 without one), as the fetch's SQL computes them;
    None as for cosines()."""
    kept = _kept_for(scope)
    rows = _rows_of(kept, ids) if kept is not None else None
    if kept is None or rows is None:
        return None
    memories = kept.memories
    at = rows.tolist()
    lexical = (
        plan.kept_scores(memories.lexicon, rows, memories.lengths).tolist()
        if plan is not None
        else [0.0] * len(at)
    )
    return Facts(
        [memories.columns[i] for i in at],
        [memories.tags[i] for i in at],
        [memories.asks[i] for i in at],
        lexical,
    )


def keyword(scope: Scope, plan: LexicalPlan, limit: int) -> list[tuple[str, float]] | None:
    """reads/lexical.lexical_search's rows (id, score) from the kept rows: of the memories in
    scope that the plan matches, the best `limit` by score, then the newest, then by id, those
    scoring above 0. None when the scope is left to SQL, the plan samples a term, or a memory
    without an embedding (not kept) could match."""
    kept = _kept_for(scope)
    if kept is None:
        return None
    memories = kept.memories
    rows = plan.kept_matches(memories.lexicon)
    if rows is None or len(memories.every) != len(memories.ids):
        return None
    created = memories.created[rows]
    usable = _usable(memories.valid_from[rows], memories.valid_until[rows], created, scope)
    rows, created = rows[usable], created[usable]
    scores = plan.kept_scores(memories.lexicon, rows, memories.lengths)
    best = np.lexsort((memories.id_order[rows], -created, -scores))[:limit]
    ids = memories.ids
    return [
        (ids[row], score)
        for row, score in zip(rows[best].tolist(), scores[best].tolist(), strict=True)
        if score > 0
    ]


def document_frequencies(scope: Scope, terms: tuple[str, ...]) -> dict[str, int] | None:
    """How many memories of the namespace hold each term (not archived, whatever their review
    or validity: reads/stats.py's count); None when the scope is left to SQL."""
    kept = _kept_for(scope)
    if kept is None:
        return None
    frequencies = kept.memories.frequencies
    return {x: frequencies.get(x, 0) for x in terms}


def edges_touching(scope: Scope, ids: Iterable[str]) -> list[Edge] | None:
    """reads/edges.py's EDGES_TOUCHING from the kept links: those with an end among `ids`,
    newest first; None when the scope is left to SQL."""
    kept = _kept_for(scope)
    if kept is None:
        return None
    memories = kept.memories
    places: set[int] = set()
    for memory_id in ids:
        places.update(memories.edges_of.get(memory_id, ()))
    return [memories.edges[at] for at in sorted(places)]


def edge_relations(scope: Scope) -> frozenset[str] | None:
    """The relations of the namespace's links (an empty set: it has none), when this search
    has read the namespace already (no check for this alone: an exact-mode search reads none);
    None otherwise, or when the scope is left to SQL."""
    search = _search.get()
    if search is None or scope.namespace_id not in search.checked:
        return None
    kept = _kept_for(scope)
    return kept.memories.relations if kept is not None else None


def temporal_rows(
    scope: Scope, ids: list[str], gap: timedelta
) -> list[tuple[str, int, str | None]] | None:
    """The rows reads/neighbours.window_rows reads by id, from the kept timeline and in its
    order: (id, created_at in microseconds, external id) of every memory in scope that shares
    a timestamp with one of these memories and has an external id, and of the nearest
    earlier and later memory within `gap` of each timestamp (of several at that moment, the
    one SQL's index scan meets first: the last and the first stored, by their places in the
    table when the namespace was read; a row moved since by a write the log ignores, a usage
    count, can make the two differ). None when the scope is left to SQL or one of the
    memories is not kept (written since the check, archived)."""
    kept = _kept_for(scope)
    if kept is None:
        return None
    line = kept.memories.timeline
    given = [line.position.get(i) for i in ids]
    if None in given or not given:
        return None
    at = np.array(given, dtype=np.intp)
    count, span = len(line.ids), micros_of(gap)
    created = line.created
    stamps = np.unique(created[at])
    first = np.searchsorted(created, stamps, side="left")
    stop = np.searchsorted(created, stamps, side="right")
    usable = _usable(line.valid_from, line.valid_until, created, scope)
    chosen = np.zeros(count, dtype=np.bool_)
    # The timestamps' own rows with an external id: a +1/-1 at each range's ends, summed.
    edges = np.zeros(count + 1, dtype=np.int64)
    np.add.at(edges, first, 1)
    np.add.at(edges, stop, -1)
    chosen |= (np.cumsum(edges[:count]) > 0) & line.external & usable
    places = np.arange(count)
    # The nearest usable row before each timestamp's range and after it, within the gap.
    last_before = np.maximum.accumulate(np.where(usable, places, -1))
    before = np.where(first > 0, last_before[np.maximum(first - 1, 0)], -1)
    lowest = np.where(stamps < _NEVER_BEFORE + span, _NEVER_BEFORE, stamps - span)
    near = before >= 0
    near[near] &= created[before[near]] >= lowest[near]
    for place in before[near]:  # of several at that moment, the one the index reads first
        chosen[line.stored_first(int(place), usable, last=True)] = True
    next_after = np.minimum.accumulate(np.where(usable, places, count)[::-1])[::-1]
    after = np.where(stop < count, next_after[np.minimum(stop, count - 1)], count)
    highest = np.where(stamps > _NEVER_AFTER - span, _NEVER_AFTER, stamps + span)
    near = after < count
    near[near] &= created[after[near]] <= highest[near]
    for place in after[near]:
        chosen[line.stored_first(int(place), usable)] = True
    places = np.flatnonzero(chosen)
    ids, externals = line.ids, line.external_ids
    return [
        (ids[i], made, externals[i])
        for i, made in zip(places.tolist(), created[places].tolist(), strict=True)
    ]


def any_ended(scope: Scope) -> bool | None:
    """Whether a memory of the namespace that a search may find (embedded) had ended by the
    scope's moment: the ended memories whose successors validity.successors reads. None when
    the scope is left to SQL or reads no moment."""
    kept = _kept_for(scope)
    if kept is None or scope.valid_at is None:
        return None
    return kept.memories.first_end <= _micros(scope.valid_at)


def _rows_of(kept: _Kept, ids: list[str]) -> npt.NDArray[np.intp] | None:
    """The kept rows of these memories, in their order; None when one of them is not kept
    (written since the check, archived, without an embedding)."""
    found = [kept.memories.row_of.get(i) for i in ids]
    if None in found:
        return None
    return np.array(found, dtype=np.intp)


def embeddings(scope: Scope, ids: list[str]) -> dict[str, npt.NDArray[np.float32]] | None:
    """The stored vectors of those of these memories that the process keeps (copies: the
    caller may change them); None when the scope is left to SQL."""
    kept = _kept_for(scope)
    if kept is None:
        return None
    row_of, vectors = kept.memories.row_of, kept.memories.vectors
    return {i: vectors[row_of[i]].copy() for i in ids if i in row_of}


@dataclass(frozen=True)
class _Kept:
    memories: Memories
    passages: Passages


class _Products:
    """The cosines of a namespace's kept rows to one query vector: every row's, computed
    once per search and vector (the scan's, then the row fetch's), or, when none was,
    only the rows asked for."""

    def __init__(self, namespace_id: int, kept: _Kept, vector: np.ndarray) -> None:
        self.kept = kept
        self.query = _unit_query(vector)
        search = _search.get()
        self._memo = search.products if search is not None else {}
        self._key = (namespace_id, self.query.tobytes())

    def all(self, table: str) -> npt.NDArray[np.float64]:
        key = (self._key[0], table, self._key[1])
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = self._cosines(table, None)
        return found

    def _some(self, table: str, rows: npt.NDArray[np.intp]) -> npt.NDArray[np.float64]:
        found = self._memo.get((self._key[0], table, self._key[1]))
        return found[rows] if found is not None else self._cosines(table, rows)

    def _cosines(self, table: str, rows: npt.NDArray[np.intp] | None) -> npt.NDArray[np.float64]:
        """The rows' cosines (all rows: None). Passages are kept at unit length, memories as
        stored, beside their inverse lengths."""
        if table == "passages":
            matrix = self.kept.passages.vectors
            return ((matrix if rows is None else matrix[rows]) @ self.query).astype(np.float64)
        memories = self.kept.memories
        if rows is None:
            products = (memories.vectors @ self.query) * memories.inverse_norms
        else:
            products = (memories.vectors[rows] @ self.query) * memories.inverse_norms[rows]
        return products.astype(np.float64)

    def memories(self, rows: npt.NDArray[np.intp]) -> npt.NDArray[np.float64]:
        return self._some("memories", rows)

    def passages(self, rows: npt.NDArray[np.intp]) -> npt.NDArray[np.float64]:
        return self._some("passages", rows)


def _kept_for(scope: Scope) -> _Kept | None:
    """The kept vectors of an unfiltered scope's namespace, checked once inside
    checked_once(); None when this scope or namespace is left to SQL."""
    if _left_to_sql(scope):
        return None
    budget = int(settings.SEARCH_VECTOR_CACHE_ROWS)
    search = _search.get()
    if search is not None and scope.namespace_id in search.checked:
        kept = search.checked[scope.namespace_id]
    else:
        noted = search.read_beside.pop(scope.namespace_id, None) if search is not None else None
        kept = _current(scope.namespace_id, budget, noted)
        if search is not None:
            search.checked[scope.namespace_id] = kept
    if kept is None:
        return None
    assert kept.memories is not None and kept.passages is not None  # _current returns these
    return _Kept(kept.memories, kept.passages)


def _left_to_sql(scope: Scope) -> bool:
    """A filtered scope, or a process that keeps no namespace: every read goes to SQL."""
    return scope.filtered or int(settings.SEARCH_VECTOR_CACHE_ROWS) <= 0


def _current(
    namespace_id: int, budget: int, noted: Fingerprint | None = None
) -> NamespaceVectors | None:
    """The namespace's vectors as the database holds them now, read again when its log moved;
    None when this search scans in SQL (too many rows, or the namespace changing meanwhile).
    `noted`: the fingerprint this search already read (fingerprint_beside)."""
    now = noted if noted is not None else _fingerprint(namespace_id)
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
        cursor.execute(FREQUENCIES_SQL.format(namespace_id=namespace_id))
        frequencies = {lexeme: int(count) for lexeme, count in cursor.fetchall()}
        cursor.execute(EDGES_SQL, [namespace_id])
        edges = [(s, t, relation, float(strength)) for s, t, relation, strength in cursor]
    every = [
        (
            r[0],
            r[4],
            _NEVER_BEFORE if r[2] is None else r[2],
            _NEVER_AFTER if r[3] is None else r[3],
            r[7],
            r[8],
        )
        for r in rows
    ]
    rows = [r for r in rows if r[1] is not None]  # what the scans find: the embedded ones
    ids = [r[0] for r in rows]
    vectors = _stacked([r[1] for r in rows])
    lengths = [np.nan if r[15] is None else float(r[15]) for r in rows]
    return Memories(
        ids=ids,
        row_of={memory_id: i for i, memory_id in enumerate(ids)},
        vectors=vectors,
        inverse_norms=_inverse_norms(vectors),
        valid_from=np.array([_NEVER_BEFORE if r[2] is None else r[2] for r in rows], np.int64),
        valid_until=np.array([_NEVER_AFTER if r[3] is None else r[3] for r in rows], np.int64),
        created=np.array([r[4] for r in rows], np.int64),
        tags=[tuple(r[5]) for r in rows],
        asks=[bool(r[6]) for r in rows],
        columns=[(r[9], r[7], *r[10:15]) for r in rows],
        lengths=np.array(lengths, dtype=np.float64),
        lexicon=Lexicon.of([(r[16] or [], r[17] or [], r[18] or []) for r in rows]),
        frequencies=frequencies,
        edges=edges,
        every=every,
    )


def _read_passages(namespace_id: int, memories: Memories) -> Passages:
    with connection.cursor() as cursor:
        cursor.execute(PASSAGES_SQL, [namespace_id])
        rows = cursor.fetchall()
    row_of, count = memories.row_of, len(memories.ids)
    found = sorted(((row_of[r[0]], r) for r in rows if r[0] in row_of), key=lambda f: f[0])
    owner = np.array([i for i, _ in found], dtype=np.intp)
    sentence = np.array([bool(r[2]) for _, r in found], dtype=np.bool_)
    return Passages(
        vectors=_unit_rows([r[1] for _, r in found]),
        every=Groups.of(owner, None, count),
        sentences=Groups.of(owner, np.flatnonzero(sentence).astype(np.intp), count),
    )


def _stacked(blobs: list[bytes]) -> npt.NDArray[np.float32]:
    """pgvector's binary values as the rows of one matrix."""
    if not blobs:
        return np.zeros((0, 0), dtype=np.float32)
    return np.stack([vector_from_binary(b) for b in blobs])


def _inverse_norms(matrix: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    norms = np.linalg.norm(matrix, axis=1) if len(matrix) else np.zeros(0, dtype=np.float32)
    return np.where(norms > 0, 1.0 / np.where(norms > 0, norms, 1.0), 0.0).astype(np.float32)


def _unit_rows(blobs: list[bytes]) -> npt.NDArray[np.float32]:
    """pgvector's binary values as unit rows (a zero vector stays zero and scores 0)."""
    matrix = _stacked(blobs)
    return matrix * _inverse_norms(matrix)[:, None]


def _scores(
    products: _Products, with_passages: bool, sentence_only: bool
) -> npt.NDArray[np.float64]:
    """Each memory's similarity as the SQL scan computes it."""
    kept = products.kept
    if not kept.memories.ids:
        return np.zeros(0)
    own = products.all("memories")
    if not with_passages:
        return own
    groups = kept.passages.sentences if sentence_only else kept.passages.every
    best = np.full(len(own), -np.inf)
    if len(groups.owners):
        scored = products.all("passages")  # all, then the kind's rows
        chosen = scored if groups.rows is None else scored[groups.rows]
        best[groups.owners] = np.maximum.reduceat(chosen, groups.starts)
    has_passage = np.isfinite(best)
    return np.where(has_passage, np.maximum(own, best), np.maximum(own, 0.0))


def _unit_query(vector: np.ndarray) -> npt.NDArray[np.float32]:
    """The vector at unit length, as pgvector's cosine compares it (a zero vector stays zero)."""
    query = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(query))
    return query / norm if norm > 0 else query


def _in_scope(memories: Memories, scope: Scope) -> npt.NDArray[np.bool_]:
    return _usable(memories.valid_from, memories.valid_until, memories.created, scope)


def _usable(
    valid_from: npt.NDArray[np.int64],
    valid_until: npt.NDArray[np.int64],
    created: npt.NDArray[np.int64],
    scope: Scope,
) -> npt.NDArray[np.bool_]:
    """Validity at the search's moment and, for an "as of" search, stored by then."""
    usable = np.ones(len(created), dtype=np.bool_)
    if scope.valid_at is not None:
        at = _micros(scope.valid_at)
        usable &= (valid_until > at) & (valid_from <= at)
    if scope.learnt_by is not None:
        usable &= created <= _micros(scope.learnt_by)
    return usable


def _micros(moment: datetime) -> int:
    return (moment - _EPOCH) // _MICROSECOND


def micros_of(span: timedelta) -> int:
    """A span in the kept rows' unit of time (their times are microseconds since the epoch)."""
    return span // _MICROSECOND


def _best(
    ids: list[str], scores: npt.NDArray[np.float64], usable: npt.NDArray[np.bool_], limit: int
) -> list[tuple[str, float]]:
    candidates = np.flatnonzero(usable)
    if len(candidates) > limit:
        top = np.argpartition(-scores[candidates], limit - 1)[:limit]
        candidates = candidates[top]
    order = candidates[np.argsort(-scores[candidates], kind="stable")]
    return [(ids[i], float(scores[i])) for i in order]
