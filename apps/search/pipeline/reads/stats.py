"""Namespace statistics the retrievers read on every search, each cached for a minute: the
live count and mean document length (BM25 and the HNSW sizing), the document frequency of
each stemmed term, and the tag names in use (entity detection). Counting them per search was
a third of what a search cost PostgreSQL, and over thousands of memories they barely move in
a minute. A count over more memories is kept longer, in proportion, up to half an hour: the
413k namespace's length average reads the whole namespace (a second), and its common terms'
counts barely move in ten minutes.

The caches are cachetools TTL caches behind one lock each (searches run on several threads;
cachetools' caches are not thread-safe on their own). Django's cache would pickle every
value and, with a shared backend, add a round trip per term: these are per-process hints.
"""

from __future__ import annotations

import json
import time
from threading import Lock
from typing import Any

from cachetools import TLRUCache, TTLCache, cached
from django.db.backends.utils import CursorWrapper

# Raw SQL reads go where the router sends reads (the replica, when one is configured).
from memoryhub.replica.routing import read_connection as connection

from ..scope import MEMORY, MEMORY_TAGS, TAG, tsquery_literal

STATS_TTL_S = 60.0
STATS_TTL_MAX_S = 1800.0
KNOWN_TAGS_TTL_S = 60.0
NAMESPACES_CACHED = 10_000
DF_CACHE_MAX = 200_000
# Terms are counted in full below this many memories in the namespace (a few thousand rows
# each at most, and the keyword ranking stays exact); from here on, in a namespace that holds
# at least DOMINANT_SHARE of the table, a term the table statistics list as frequent takes
# its count from them.
ESTIMATED_FROM_ROWS = 20_000
DOMINANT_SHARE = 0.5


def _ttl(rows: int) -> float:
    """How long a count over `rows` memories is kept: a minute, longer for large counts."""
    return min(STATS_TTL_S * max(1.0, rows / 5_000), STATS_TTL_MAX_S)


_counts: TLRUCache[int, tuple[int, float]] = TLRUCache(
    maxsize=NAMESPACES_CACHED, ttu=lambda _key, value, now: now + _ttl(value[0])
)
_counts_lock = Lock()
# Document frequency per (namespace, stemmed term). Only terms the namespace holds are cached:
# a term no memory has is counted again by the next search, so a memory written a moment ago
# is found by a word that is new to its namespace.
_frequencies: TLRUCache[tuple[int, str], int] = TLRUCache(
    maxsize=DF_CACHE_MAX, ttu=lambda _key, value, now: now + _ttl(value)
)
_frequencies_lock = Lock()
# [expires, table rows, {lexeme: share of the rows}] from pg_stats (see frequent_terms)
_frequent: list[Any] = [0.0, 0.0, {}]
_frequent_lock = Lock()
_tags: TTLCache[int, tuple[str, ...]] = TTLCache(maxsize=NAMESPACES_CACHED, ttl=KNOWN_TAGS_TTL_S)


def namespace_stats(namespace_id: int) -> tuple[int, float]:
    """(live memories, mean search-vector length) of the namespace."""
    with _counts_lock:
        found = _counts.get(namespace_id)
    if found is not None:
        return found
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(*), coalesce(avg(length(search_vector)), 1) FROM {MEMORY} "
            "WHERE namespace_id = %s AND NOT archived",
            [namespace_id],
        )
        count, avgdl = cursor.fetchone()
    found = (int(count), float(avgdl))
    with _counts_lock:
        _counts[namespace_id] = found
    return found


def namespace_size(namespace_id: int) -> int:
    """Live memories in the namespace."""
    return namespace_stats(namespace_id)[0]


def document_frequencies(
    namespace_id: int, lexemes: tuple[str, ...], cap: int = 0, namespace_rows: int = 0
) -> list[int]:
    """How many live memories of the namespace hold each stemmed term. With `cap`, counting
    stops past cap memories (what decides that a term is common) and the planner's estimate
    stands for the rest; and in a namespace of `namespace_rows` >= ESTIMATED_FROM_ROWS that
    holds most of the table, a term the table statistics list as frequent takes its count from
    them (its share x `namespace_rows`) without reading a row. Counting "use" in the 37k of a
    413k namespace's memories that hold it took longer than the rest of the search; "tree" in
    4.5k, a third of it."""
    with _frequencies_lock:
        cached = {x: _frequencies.get((namespace_id, x)) for x in lexemes}
    known = {x: df for x, df in cached.items() if df is not None}  # only counts > 0 are kept
    todo = [x for x in lexemes if x not in known]
    found: dict[str, int] = {}
    if todo and cap and namespace_rows >= ESTIMATED_FROM_ROWS:
        shares = frequent_terms(namespace_rows)
        found = {x: max(1, round(shares[x] * namespace_rows)) for x in todo if x in shares}
        todo = [x for x in todo if x not in found]
    if todo:
        with connection.cursor() as cursor:
            found.update(_count(cursor, namespace_id, todo, cap))
    known.update(found)
    with _frequencies_lock:
        _frequencies.update({(namespace_id, x): df for x, df in found.items() if df > 0})
    return [known[x] for x in lexemes]


def _count(cursor: CursorWrapper, namespace_id: int, todo: list[str], cap: int) -> dict[str, int]:
    if not cap:
        counts = ", ".join("count(*) FILTER (WHERE search_vector @@ %s::tsquery)" for _ in todo)
        cursor.execute(
            f"SELECT {counts} FROM {MEMORY} WHERE namespace_id = %s AND NOT archived "
            "AND search_vector @@ %s::tsquery",
            [tsquery_literal(x) for x in todo]
            + [namespace_id, " | ".join(tsquery_literal(x) for x in todo)],
        )
        return dict(zip(todo, cursor.fetchone(), strict=True))
    counts = ", ".join(
        f"(SELECT count(*) FROM (SELECT FROM {MEMORY} WHERE namespace_id = %s "
        "AND NOT archived AND search_vector @@ %s::tsquery LIMIT %s) c)"
        for _ in todo
    )
    cursor.execute(
        f"SELECT {counts}",
        [p for x in todo for p in (namespace_id, tsquery_literal(x), cap + 1)],
    )
    out = dict(zip(todo, cursor.fetchone(), strict=True))
    for lexeme, df in out.items():
        if df > cap:
            out[lexeme] = max(df, _estimated_rows(cursor, namespace_id, lexeme))
    return out


def _estimated_rows(cursor: CursorWrapper, namespace_id: int, lexeme: str) -> int:
    """The planner's row estimate for the namespace's memories holding `lexeme` (from the
    lexeme frequencies ANALYZE keeps for the search vector; no row is read)."""
    cursor.execute(
        f"EXPLAIN (FORMAT JSON) SELECT FROM {MEMORY} WHERE namespace_id = %s "
        "AND NOT archived AND search_vector @@ %s::tsquery",
        [namespace_id, tsquery_literal(lexeme)],
    )
    plan = cursor.fetchone()[0]
    if isinstance(plan, str):
        plan = json.loads(plan)
    return int(plan[0]["Plan"]["Plan Rows"])


def frequent_terms(namespace_rows: int) -> dict[str, float]:
    """{lexeme: share of the memories holding it} for the terms ANALYZE found frequent in the
    search vectors (pg_stats' most common elements, about 1,000 at the default statistics
    target), when a namespace of `namespace_rows` holds at least DOMINANT_SHARE of the table;
    else {} (the table's shares need not be this namespace's)."""
    now = time.monotonic()
    shares: dict[str, float]
    with _frequent_lock:
        expires, table_rows, shares = _frequent
    if expires <= now:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT c.reltuples, s.most_common_elems::text::text[], "
                "s.most_common_elem_freqs FROM pg_class c LEFT JOIN pg_stats s "
                "ON s.schemaname = current_schema() AND s.tablename = c.relname "
                "AND s.attname = 'search_vector' WHERE c.oid = %s::regclass",
                [MEMORY],
            )
            rows, elems, freqs = cursor.fetchone()
        table_rows = max(float(rows or 0), 0.0)
        shares = dict(zip(elems or (), freqs or (), strict=False))
        with _frequent_lock:
            _frequent[:] = [now + STATS_TTL_S, table_rows, shares]
    if not shares or namespace_rows < DOMINANT_SHARE * table_rows:
        return {}
    return shares


@cached(_tags, lock=Lock())
def namespace_tags(namespace_id: int) -> tuple[str, ...]:
    """Tag names in use in the namespace (entity detection)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT DISTINCT t.name FROM {TAG} t JOIN {MEMORY_TAGS} mt ON mt.tag_id = t.id "
            f"JOIN {MEMORY} m ON m.id = mt.memory_id WHERE m.namespace_id = %s",
            [namespace_id],
        )
        return tuple(sorted(r[0] for r in cursor.fetchall()))
