"""Stage 3, semantic strategy: nearest memories by cosine, exactly in a small namespace and
through the HNSW index in a large one."""

from __future__ import annotations

from threading import Lock
from typing import Any

import numpy as np
from cachetools import TTLCache

from apps.search.types import Hit
from apps.vectors import nearest

# Raw SQL reads go where the router sends reads (the replica, when one is configured).
from memoryhub.replica.routing import read_connection as connection

from ..scope import MEMORY, MEMORY_TAGS, PASSAGE, TAG, Scope
from . import namespace_vectors
from .stats import namespace_size

SEMANTIC_MIN = 0.3
SEMANTIC_FALLBACK_MIN = 0.17

# hnsw.ef_search by namespace size, chosen by measuring recall@10 against an exact scan on the
# scale set (docs/benchmarks.md, "Scale"): recall at a fixed ef_search falls as the graph grows.
EF_SEARCH_BY_SIZE = ((20_000, 100), (100_000, 200), (250_000, 300))
EF_SEARCH_LARGEST = 400

# The HNSW index is built on the embedding cast to halfvec (migration 0007); similarities are
# computed on the stored float vectors.
HNSW_ORDER = nearest.order_by("m.embedding", "%s::vector", walk_index=True)
COSINE = "coalesce(1 - (m.embedding <=> %s::vector), 0)"
# A memory's best passage (apps/memories/passages.py) by cosine; 0 without passages. The
# previous-turn passage of a dialog turn (apps/memories/dialog.py) counts unless left out.
PASSAGE_COSINE = (
    f"coalesce((SELECT max(1 - (p.embedding <=> %s::vector)) FROM {PASSAGE} p "
    "WHERE p.memory_id = m.id), 0)"
)
SENTENCE_ONLY = " AND p.previous_id IS NULL"
SENTENCE_COSINE = PASSAGE_COSINE.replace("p.memory_id = m.id", "p.memory_id = m.id" + SENTENCE_ONLY)
# The same evidence for a whole namespace at once, for the exact scan: the memories' own cosines
# and the cosines of the namespace's passages (their namespace column, migration memories 0027)
# in one pass, each memory's best kept by one aggregate. A subquery per memory probed the
# passage index once per memory. (A join of the memories to the passages' aggregate gave the
# planner, misled by a new namespace's statistics, a nested loop 30x slower.)
NAMESPACE_PASSAGES = {PASSAGE_COSINE: "", SENTENCE_COSINE: SENTENCE_ONLY}


def ef_search_for(size: int, limit: int, setting: int = 0) -> int:
    """The HNSW candidate list for a namespace of `size` memories: the setting when given,
    else the measured table; never below the number of rows asked for."""
    if setting:
        return max(limit, min(setting, 1000))
    chosen = next((ef for top, ef in EF_SEARCH_BY_SIZE if size <= top), EF_SEARCH_LARGEST)
    return max(limit, chosen)


def semantic_search(
    scope: Scope,
    vector: np.ndarray,
    limit: int,
    min_similarity: float = SEMANTIC_MIN,
    *,
    exact_max: int = 10_000,
    ef_search: int = 0,
    passages: str | None = None,
) -> tuple[list[Hit], bool]:
    """Nearest memories by cosine. A namespace of at most `exact_max` memories, or a tag
    filter that at most twice as many pass (few_tagged), is scanned exactly (cheaper
    than walking a graph built over every namespace, and never misses); a larger one goes
    through the HNSW index with iterative scan, which keeps filtered queries full
    (apps/vectors/nearest.py; the size is the live count the keyword statistics keep, so
    this costs no probe of its own). When the walk gives up short of `limit` (a filter lets
    few memories through, or the graph does not lead to the namespace's rows) while the scope
    may hold more, the scope is scanned exactly, so a page is never short while matches
    exist. Returns hits at or above `min_similarity`; when none reach it, the rows at or
    above the fallback threshold, and reports that it fell back. `passages` (PASSAGE_COSINE
    or SENTENCE_COSINE): the exact scan ranks a memory by the higher of its own cosine and
    its best passage's, the evidence the row fetch scores it by, so a memory whose one
    sentence answers is found as well as rescored. The HNSW walk indexes memory vectors only:
    in a larger namespace passages rescore what it finds."""
    size = namespace_size(scope.namespace_id)
    if size <= exact_max or few_tagged(scope.tags, TAGGED_EXACT_FACTOR * exact_max):
        # A whole namespace's vectors kept in the process, checked fresh; else in SQL.
        sentence_only = passages == SENTENCE_COSINE
        kept = namespace_vectors.nearest(scope, vector, limit, passages, sentence_only)
        if kept is not None:
            rows = kept
        else:  # the vector as ~400 numbers of text: for SQL only
            rows = exact_nearest(scope, nearest.vector_literal(vector), limit, passages)
    else:
        literal = nearest.vector_literal(vector)
        rows = hnsw_nearest(scope, literal, limit, ef_search_for(size, limit, ef_search))
        if len(rows) < limit and (scope.filtered or len(rows) < size):
            # A short page: a filter few rows pass, or a graph the walk could not lead into
            # this namespace (copies of one vector link only to each other, and an index
            # shared with other namespaces or holding dead rows can strand these rows).
            rows = exact_nearest(scope, literal, limit, passages)
    rows.sort(key=lambda r: -r[1])
    return apply_similarity_floor(rows, min_similarity)


# A tag filter's memories are scanned exactly up to this many times exact_max: an HNSW walk
# that must skip most of the graph costs more than one through a whole namespace of that size
# (at 413k, 14k memories with the tag: exact 94 ms mean / 121 p95, the walk 140 / 331, and the
# walk found 0.76 of the exact top 10).
TAGGED_EXACT_FACTOR = 2
# How many memories carry a tag filter's tags, by tags, for a little while (counts move slowly;
# a stale count only picks the slower of two plans that find the same rows).
_tagged: TTLCache[Any, int] = TTLCache(maxsize=256, ttl=60)
_tagged_lock = Lock()


def few_tagged(tags: tuple[str, ...], most: int) -> bool:
    """Whether at most `most` memories carry one of `tags` (in any namespace: an upper bound
    of the scope's size read from the tag links alone, about a millisecond). Then the scope is
    scanned exactly: an HNSW walk that must skip the 96% of a 100k namespace without the tag
    took 71 ms on average and missed some of the true top 10; the exact scan over the 3.5k
    tagged memories took 21 ms, passages included (docs/benchmarks.md, "Scale")."""
    if not tags:
        return False
    key = (tuple(sorted(tags)), most)
    with _tagged_lock:
        found = _tagged.get(key)
    if found is None:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT count(*) FROM (SELECT 1 FROM {MEMORY_TAGS} mt JOIN {TAG} t "
                "ON t.id = mt.tag_id WHERE t.name = ANY(%s) LIMIT %s) c",
                [list(tags), most + 1],
            )
            found = cursor.fetchone()[0]
        with _tagged_lock:
            _tagged[key] = found
    return bool(found <= most)


def hnsw_nearest(scope: Scope, literal: str, limit: int, ef_search: int) -> list[tuple[str, float]]:
    """Approximate nearest rows in scope through the HNSW index (iterative scan), with the
    scope's rows still outside the index (a large batch's, apps/vectors/vector_index.py)
    compared exactly."""
    where, params = scope.where(probe_tags=True)
    select = (
        f"SELECT m.id::text, 1 - (m.embedding <=> %s::vector) AS sim FROM {MEMORY} m "
        f"WHERE {where} AND m.embedding IS NOT NULL"
    )
    sql = nearest.walk_or_scan(select, "m", HNSW_ORDER, "sim DESC", "%s", union_order="u.sim DESC")
    with connection.cursor() as cursor:
        cursor.execute(
            nearest.walk_settings(ef_search) + sql,
            [literal, *params, literal, limit, literal, *params, limit, limit],
        )
        return [(i, float(s)) for i, s in nearest.walk_rows(cursor)]


def exact_nearest(
    scope: Scope, literal: str, limit: int, passages: str | None = None
) -> list[tuple[str, float]]:
    """Exact nearest rows in scope: every row passing the scope is compared (ordering by the
    computed similarity, which no index matches, keeps the planner off the HNSW index).
    `passages`: a passage cosine expression (PASSAGE_COSINE, SENTENCE_COSINE); a row's
    similarity is then the higher of its own and its best passage's."""
    if passages and not scope.filtered and passages in NAMESPACE_PASSAGES:
        return _namespace_nearest(scope, literal, limit, NAMESPACE_PASSAGES[passages])
    where, params = scope.where()
    sim, sim_params = "1 - (m.embedding <=> %s::vector)", [literal]
    if passages:
        sim, sim_params = f"greatest({sim}, {passages})", [literal, literal]
    sql = (
        f"SELECT m.id::text, {sim} AS sim FROM {MEMORY} m "
        f"WHERE {where} AND m.embedding IS NOT NULL ORDER BY sim DESC LIMIT %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, sim_params + params + [limit])
        return [(i, float(s)) for i, s in cursor.fetchall()]


def _namespace_nearest(
    scope: Scope, literal: str, limit: int, passage_filter: str
) -> list[tuple[str, float]]:
    """exact_nearest with passages over a whole namespace (no filter narrows it, so reading all
    its passages reads few more than the memories in scope have): the memories' own cosines
    and their passages' in one pass, each memory's best kept (NAMESPACE_PASSAGES). The same
    scores as the per-memory form: a memory without passages counts its own cosine or 0,
    whichever is higher (the subquery's coalesce). Passages of memories outside the scope are
    dropped with them (no own row in the group)."""
    where, params = scope.where()
    sql = (
        "SELECT u.id::text, CASE WHEN count(*) = 1 THEN greatest(max(u.sim), 0) "
        "ELSE max(u.sim) END AS sim FROM ("
        f"SELECT m.id, 1 - (m.embedding <=> %s::vector) AS sim, true AS own FROM {MEMORY} m "
        f"WHERE {where} AND m.embedding IS NOT NULL UNION ALL "
        f"SELECT p.memory_id, 1 - (p.embedding <=> %s::vector), false FROM {PASSAGE} p "
        f"WHERE p.namespace_id = %s{passage_filter}) u "
        "GROUP BY u.id HAVING bool_or(u.own) ORDER BY sim DESC LIMIT %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [literal, *params, literal, scope.namespace_id, limit])
        return [(i, float(s)) for i, s in cursor.fetchall()]


def apply_similarity_floor(
    rows: list[tuple[str, float]],
    minimum: float = SEMANTIC_MIN,
    fallback: float = SEMANTIC_FALLBACK_MIN,
) -> tuple[list[Hit], bool]:
    """Keep rows >= minimum; if none, keep rows >= fallback and say a fallback happened."""
    hits = [Hit(i, s) for i, s in rows if s >= minimum]
    if hits or not rows:
        return hits, False
    return [Hit(i, s) for i, s in rows if s >= fallback], True
