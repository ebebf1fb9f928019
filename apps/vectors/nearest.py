"""Nearest-neighbour queries over the one HNSW index that every namespace shares: the pieces
of SQL a query is built from, whatever it selects.

The index (memory_embedding_half_hnsw) holds all namespaces' embeddings. A query filtered to a
small namespace that walked it would meet mostly other namespaces' rows: it could come back
short or miss that namespace's nearest memories. There, comparing the namespace's own rows is
exact and cheaper. A large namespace walks the index with iterative scan, which keeps reading
until the filter has let enough of its own rows through.

The index holds only the rows marked vector_indexed: a large batch leaves its rows outside it
for the vector_index job (apps/vectors/vector_index.py). A walk therefore also scans the
namespace's rows outside it exactly (`walk_or_scan`), so they are found from their commit on.

What counts as small depends on the caller's cost: a single query (search, the write path's
near-duplicate check) compares up to SEARCH_EXACT_SCAN_MAX rows; the near-duplicate job, which
compares every memory with every other, stops sooner (apps/queues/jobs.py). Which table and
which rows are the domain's: the queries over memories are in apps/memories/neighbours.py.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt
from django.db.backends.utils import CursorWrapper

# The dimension of the packaged model's vectors, which the stored columns are declared with.
EMBEDDING_DIM = 384


def hnsw_distance(column: str, query: str) -> str:
    """The cosine distance expression the HNSW index (memory_embedding_half_hnsw) serves: a
    nearest-neighbour query must ORDER BY exactly this to use the index."""
    half = f"halfvec({EMBEDDING_DIM})"
    return f"({column})::{half} <=> ({query})::{half}"


def vector_literal(vector: npt.ArrayLike) -> str:
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


def vector_from_binary(data: bytes) -> npt.NDArray[np.float32]:
    """A pgvector `vector_send` value (dimension, unused, big-endian float4s) as a float32
    array: the same values as parsing the text form, without parsing ~400 numbers."""
    return np.frombuffer(data, dtype=">f4", offset=4).astype(np.float32)


def walk_settings(ef_search: int | None = None) -> str:
    """The settings of an index walk as statements to send in front of the walk's own, in one
    execute: iterative scan, and the candidate list size when given (pgvector's default, 40,
    otherwise). PostgreSQL runs a string of statements as one transaction, so SET LOCAL holds
    for the walk and ends with it (or, inside a caller's transaction, with that), and the walk
    costs one round trip where BEGIN, two SETs, the walk and COMMIT cost five."""
    size = f"SET LOCAL hnsw.ef_search = {int(ef_search)}; " if ef_search is not None else ""
    return f"{size}SET LOCAL hnsw.iterative_scan = relaxed_order; "


def walk_rows(cursor: CursorWrapper) -> list[tuple[Any, ...]]:
    """The rows of a statement sent after walk_settings(): the last result, past the SETs'."""
    while cursor.description is None and cursor.nextset():
        pass
    rows: list[tuple[Any, ...]] = cursor.fetchall()
    return rows


def prepare_walk(cursor: CursorWrapper, ef_search: int | None = None) -> None:
    """walk_settings() as statements of their own, for a caller inside a transaction that
    runs several statements after them."""
    cursor.execute(walk_settings(ef_search))
