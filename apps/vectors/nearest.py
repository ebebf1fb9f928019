"""Nearest-neighbour queries over the one HNSW index that every namespace shares.

The index (memory_embedding_half_hnsw) holds all namespaces' embeddings. A query filtered to a
small namespace that walked it would meet mostly other namespaces' rows: it could come back
short or miss that namespace's nearest memories. There, comparing the namespace's own rows is
exact and cheaper. A large namespace walks the index with iterative scan, which keeps reading
until the filter has let enough of its own rows through.

The index holds only the rows marked vector_indexed: a large batch leaves its rows outside it
for the vector_index job (apps/memories/vector_index.py). A walk therefore also scans the
namespace's rows outside it exactly (`walk_or_scan`), so they are found from their commit on.

What counts as small depends on the caller's cost: a single query (search, the write path's
near-duplicate check) compares up to SEARCH_EXACT_SCAN_MAX rows; the near-duplicate job, which
compares every memory with every other, stops sooner (apps/queues/jobs.py).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from django.conf import settings
from django.db import connection

from .models import Memory, hnsw_distance


def vector_literal(vector) -> str:
    """pgvector's text form of a vector, with float32's seven significant digits. A search
    sends the same few vectors to several statements, so each is formatted once (and with one
    %-format, about twice as fast as joining formatted numbers)."""
    return _literal_of(np.asarray(vector, dtype=np.float32).tobytes())


@lru_cache(maxsize=64)
def _literal_of(data: bytes) -> str:
    values = np.frombuffer(data, dtype=np.float32).tolist()
    return _literal_format(len(values)) % tuple(values)


@lru_cache(maxsize=4)
def _literal_format(dimensions: int) -> str:
    return "[" + ",".join(["%.7g"] * dimensions) + "]"


def larger_than(cursor, namespace_id: int, count: int) -> bool:
    """Whether the namespace holds more than `count` memories. Reads at most that many index
    entries and no rows; archived memories count too, since an upper bound is enough to pick a
    plan (0.4 ms at 2,760 memories, against 2.2 ms to count the live ones)."""
    cursor.execute(
        f"SELECT 1 FROM {Memory._meta.db_table} WHERE namespace_id = %s OFFSET %s LIMIT 1",
        [namespace_id, count],
    )
    return cursor.fetchone() is not None


def order_by(column: str, query: str, *, walk_index: bool) -> str:
    """The ORDER BY of a nearest-neighbour query: the index's own expression when it walks the
    index, else the exact distance on the stored vectors (which no index serves)."""
    return hnsw_distance(column, query) if walk_index else f"{column} <=> {query}"


def walk_or_scan(
    select: str, alias: str, index_order: str, exact_order: str, limit: str, union_order: str
) -> str:
    """A nearest-neighbour query that walks the HNSW index: `select` (SELECT ... FROM ... WHERE
    ..., its parameters given twice by the caller) over the rows in the index, ordered by the
    index's expression, and the same over the rows still outside it (few, found through the
    partial index memory_ns_unindexed), ordered by the exact distance; each at most `limit`,
    then the union ordered by `union_order` (over the columns `select` names, as `u`) and cut
    to `limit` (so `limit`, when a placeholder, is given three times)."""
    return (
        f"SELECT * FROM (({select} AND {alias}.vector_indexed ORDER BY {index_order} "
        f"LIMIT {limit}) UNION ALL ({select} AND NOT {alias}.vector_indexed "
        f"ORDER BY {exact_order} LIMIT {limit})) u ORDER BY {union_order} LIMIT {limit}"
    )


def prepare_walk(cursor, ef_search: int | None = None) -> None:
    """Settings for an index walk, for the current transaction only: iterative scan, and the
    candidate list size when given (pgvector's default, 40, otherwise)."""
    if ef_search is not None:
        cursor.execute(f"SET LOCAL hnsw.ef_search = {int(ef_search)}")
    cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")


def nearest_per_vector(
    namespace_id: int,
    vectors,
    *,
    limit: int,
    min_similarity: float,
    valid_at=None,
    with_validity: bool = False,
) -> list[tuple]:
    """(1-based position of the vector, memory id, cosine) of each vector's `limit` nearest
    live memories of the namespace at cosine >= `min_similarity`, in one statement; with
    `valid_at`, only memories still valid then; `with_validity` adds each memory's valid_until.
    The write path asks once per batch for its near-duplicate and possible-update checks."""
    if len(vectors) == 0:
        return []
    literals = [vector_literal(v) for v in vectors]
    validity, where_params = "", [namespace_id]
    if valid_at is not None:
        validity = "AND (m.valid_until IS NULL OR m.valid_until > %s)"
        where_params.append(valid_at)
    select = (
        "SELECT m.id, 1 - (m.embedding <=> q.vec) AS similarity, m.valid_until "
        f"FROM {Memory._meta.db_table} m "
        "WHERE m.namespace_id = %s AND NOT m.archived AND m.review = 'approved' "
        f"AND m.embedding IS NOT NULL {validity}"
    )
    exact = "m.embedding <=> q.vec"
    with connection.cursor() as cur:
        walk = larger_than(cur, namespace_id, settings.SEARCH_EXACT_SCAN_MAX)
        if walk:
            prepare_walk(cur, ef_search=40)
            index_order = order_by("m.embedding", "q.vec", walk_index=True)
            per_vector = walk_or_scan(
                select, "m", index_order, exact, "%s", union_order="u.similarity DESC"
            )
            # each branch of the union: its filters and its limit; then the union's limit
            per_vector_params = [*where_params, limit, *where_params, limit, limit]
        else:
            per_vector = f"{select} ORDER BY {exact} LIMIT %s"
            per_vector_params = [*where_params, limit]
        cur.execute(
            f"""
            SELECT q.pos, nd.id, nd.similarity, nd.valid_until
              FROM unnest(%s::text[]::vector[]) WITH ORDINALITY AS q(vec, pos)
              CROSS JOIN LATERAL ({per_vector}) nd
             WHERE nd.similarity >= %s
            """,
            [literals, *per_vector_params, min_similarity],
        )
        rows = cur.fetchall()
    if with_validity:
        return [(pos, memory_id, float(sim), until) for pos, memory_id, sim, until in rows]
    return [(pos, memory_id, float(sim)) for pos, memory_id, sim, _ in rows]
