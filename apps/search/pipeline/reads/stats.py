"""Namespace statistics the retrievers read on every search, each cached for a minute: the
live count and mean document length (BM25 and the HNSW sizing), the document frequency of
each stemmed term, and the tag names in use (entity detection). Counting them per search was
a third of what a search cost PostgreSQL, and over thousands of memories they barely move in
a minute.

The caches are cachetools TTL caches behind one lock each (searches run on several threads;
cachetools' caches are not thread-safe on their own). Django's cache would pickle every
value and, with a shared backend, add a round trip per term: these are per-process hints.
"""

from __future__ import annotations

from threading import Lock

from cachetools import TTLCache, cached

# Raw SQL reads go where the router sends reads (the replica, when one is configured).
from memoryhub.db_router import read_connection as connection

from ..scope import MEMORY, MEMORY_TAGS, TAG, tsquery_literal

STATS_TTL_S = 60.0
KNOWN_TAGS_TTL_S = 60.0
NAMESPACES_CACHED = 10_000
DF_CACHE_MAX = 200_000

_counts: TTLCache = TTLCache(maxsize=NAMESPACES_CACHED, ttl=STATS_TTL_S)
_counts_lock = Lock()
# Document frequency per (namespace, stemmed term). Only terms the namespace holds are cached:
# a term no memory has is counted again by the next search, so a memory written a moment ago
# is found by a word that is new to its namespace.
_frequencies: TTLCache = TTLCache(maxsize=DF_CACHE_MAX, ttl=STATS_TTL_S)
_frequencies_lock = Lock()
_tags: TTLCache = TTLCache(maxsize=NAMESPACES_CACHED, ttl=KNOWN_TAGS_TTL_S)


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


def document_frequencies(namespace_id: int, lexemes: tuple[str, ...]) -> list[int]:
    """How many live memories of the namespace hold each stemmed term."""
    with _frequencies_lock:
        cached = {x: _frequencies.get((namespace_id, x)) for x in lexemes}
    known = {x: df for x, df in cached.items() if df is not None}  # only counts > 0 are kept
    todo = [x for x in lexemes if x not in known]
    if todo:
        counts = ", ".join("count(*) FILTER (WHERE search_vector @@ %s::tsquery)" for _ in todo)
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT {counts} FROM {MEMORY} WHERE namespace_id = %s AND NOT archived "
                "AND search_vector @@ %s::tsquery",
                [tsquery_literal(x) for x in todo]
                + [namespace_id, " | ".join(tsquery_literal(x) for x in todo)],
            )
            found = dict(zip(todo, cursor.fetchone(), strict=True))
        known.update(found)
        with _frequencies_lock:
            _frequencies.update({(namespace_id, x): df for x, df in found.items() if df > 0})
    return [known[x] for x in lexemes]


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
