"""Stages 3 and 4 for one query text: retrieve per strategy, complete every candidate's
scores, borrow dialog context, fuse. search() runs this once per query variant and hands the
pool's Ranked items (score = fused score) to the re-ranking stages."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from apps.search.config import SearchSettings
from apps.search.types import Hit, QueryAnalysis, Ranked

from . import coactivate, context, feedback, fuse, graph, retrieve, validity
from .scope import Scope

POOL = 100  # candidates per strategy
EXACT_POOL = 50
GRAPH_SEEDS = 5


@dataclass
class Pool:
    """What retrieval found for one query text; `items` carry the fused score."""

    items: dict[str, Ranked]
    lists: dict[str, list[tuple[str, float]]]  # strategy -> [(id, raw score)] as retrieved
    temporal: dict[str, tuple[str, ...]]
    graph_adjacency: dict[str, list[tuple[str, float]]]
    fallback: bool = False
    best_similarity: float = 0.0
    plan: retrieve.LexicalPlan | None = None
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def fused(self) -> dict[str, float]:
        return {k: r.score for k, r in self.items.items()}


@dataclass(frozen=True)
class KeywordHits:
    """The keyword strategy's plan and candidates for one query text."""

    plan: retrieve.LexicalPlan
    hits: list[Hit]


def keyword_hits(text: str, scope: Scope, config: SearchSettings) -> KeywordHits:
    # The budget counts the namespace's memories; under a filter most of them fall outside the
    # scope, and the pool could come up short.
    budget = 0 if scope.filtered else config.lexical_row_budget
    plan = retrieve.lexical_plan(
        text, scope.namespace_id, config.lexical_common_rows, row_budget=budget, pool=POOL
    )
    return KeywordHits(plan, retrieve.lexical_search(scope, plan, POOL))


class Timer:
    """Adds each call's milliseconds to timings[name]."""

    def __init__(self, timings: dict[str, float]):
        self.timings = timings

    def __call__(self, name: str, fn: Callable, *args, **kwargs):
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            ms = (time.perf_counter() - start) * 1000
            self.timings[name] = round(self.timings.get(name, 0.0) + ms, 2)


def gather(
    *,
    text: str,
    vector: np.ndarray | None,
    analysis: QueryAnalysis,
    scope: Scope,
    weights: Mapping[str, float],
    graph_enabled: bool,
    config: SearchSettings,
    semantic_only: bool = False,
    query_vector: np.ndarray | None = None,
    keyword: KeywordHits | None = None,
) -> Pool:
    """`vector` is what the semantic strategies match (the focused query's, see
    pipeline/focus.py); `query_vector`, when it differs, is the query's own, whose cosines
    the confidence estimate reads (it was calibrated on them). `keyword`: the keyword
    strategy's result for `text` when the caller already ran it (while the query was being
    embedded)."""
    timings: dict[str, float] = {}
    timer = Timer(timings)
    on = config.on
    lists: dict[str, list[tuple[str, float]]] = {}
    use_lexical = on("lexical") and not semantic_only and weights.get("keyword", 0) > 0
    use_semantic = on("semantic") and vector is not None and weights.get("semantic", 0) > 0
    plan = None
    if use_lexical:
        found = keyword or timer("lexical", keyword_hits, text, scope, config)
        plan = found.plan
        lists["keyword"] = [(h.id, h.score) for h in found.hits]
    fallback = False
    # The passage evidence the semantic scan ranks by and the row fetch scores by, or None.
    passages = _passage_cosine(on) if on("passages") and use_semantic else None
    if use_semantic:
        hits, fallback = timer(
            "semantic",
            retrieve.semantic_search,
            scope,
            vector,
            POOL,
            exact_max=config.exact_scan_max,
            ef_search=config.hnsw_ef_search,
            passages=passages,
        )
        lists["semantic"] = [(h.id, h.score) for h in hits]
    if on("successors") and use_semantic:
        found = timer("successors", _successors, scope, vector)
        if found:
            lists[validity.STRATEGY] = found
            weights = {**weights, validity.STRATEGY: weights.get("semantic", 0.0)}
    phrases = [*analysis.phrases, *(e for e in analysis.entities if e not in analysis.tag_entities)]
    if on("exact") and not semantic_only and phrases:
        hits = timer("exact", retrieve.exact_search, scope, phrases, EXACT_POOL)
        lists["exact"] = [(h.id, h.score) for h in hits]
    seeds = _seeds(lists)
    second = None
    if on("feedback") and config.feedback_share > 0 and use_semantic and seeds:
        second = timer("feedback", _feedback_vector, vector, seeds)
    if second is not None:
        hits, _ = timer(
            "feedback",
            retrieve.semantic_search,
            scope,
            second,
            POOL,
            exact_max=config.exact_scan_max,
            ef_search=config.hnsw_ef_search,
        )
        lists[feedback.STRATEGY] = [(h.id, h.score) for h in hits]
        semantic_weight = weights.get("semantic", 0.0)
        weights = {**weights, feedback.STRATEGY: config.feedback_share * semantic_weight}
    edges: list = []
    if on("graph") and graph_enabled and not semantic_only and seeds:
        edges = timer("graph", graph.fetch_edges, scope.namespace_id, seeds)
        reached = graph.walk(seeds, edges)
        allowed = retrieve.in_scope(scope, list(reached))  # graph hits pass the filters too
        ranked = sorted(((k, v) for k, v in reached.items() if k in allowed), key=lambda kv: -kv[1])
        lists["graph"] = ranked[:POOL]
    elif on("coactivation") and seeds:
        edges = timer("graph", graph.fetch_edges, scope.namespace_id, seeds, 1)
    pool = list(dict.fromkeys(k for hits in lists.values() for k, _ in hits))
    cosines = {}
    if second is not None:
        cosines["feedback"] = second
    if query_vector is not None and vector is not None and query_vector is not vector:
        cosines["query_similarity"] = query_vector
    fetch = partial(retrieve.fetch_rows, passages=passages)
    rows = timer("fetch", fetch, pool, plan, vector, cosines)
    temporal: dict[str, tuple[str, ...]] = {}
    surrounding: dict[str, tuple[str, ...]] = {}  # the context stage's window of turns
    if (on("context") or on("coactivation")) and rows:
        times = [r["created_at"] for r in rows.values()]
        gap = coactivate.MAX_GAP.total_seconds()
        window = timer("neighbours", retrieve.window_rows, scope, times, gap)
        temporal = coactivate.temporal_neighbours(window)
        surrounding = temporal
        if on("context"):  # beyond the adjacent turns only inside a session (fetched whole)
            sessions = {i: created for i, created, _ in window}
            surrounding = context.window(temporal, context.CONTEXT_REACH, sessions)
        extra = list(
            dict.fromkeys(n for k in pool for n in surrounding.get(k, ()) if n not in rows)
        )
        if extra:
            rows.update(timer("fetch", fetch, extra, plan, vector, cosines))
    ranks: dict[str, dict[str, int]] = {k: {} for k in rows}
    raw: dict[str, dict[str, float]] = {
        k: {"_lexical": r["lexical"], "_similarity": r["similarity"]} for k, r in rows.items()
    }
    for name in cosines:
        for k, r in rows.items():
            raw[k]["_" + name] = r[name]
    if passages:
        _best_passage(raw, rows, own_vector_only="query_similarity" not in cosines)
    for strategy, hits in lists.items():
        for rank, (key, score) in enumerate(hits, start=1):
            if key in rows:
                ranks[key][strategy] = rank
                raw[key][strategy] = score
    normalized = _complete_scores(raw, lists, use_lexical, use_semantic)
    if on("context") and surrounding:
        normalized = context.with_context(normalized, surrounding)
    fused = fuse.fuse_pool(
        config.fusion_used,
        normalized=normalized,
        lists=lists,
        weights=weights,
        pool=rows,
        vector_weight=config.hybrid_vector_weight,
    )
    items = {k: _ranked(k, r, fused.get(k, 0.0), ranks[k], raw[k]) for k, r in rows.items()}
    own = "query_similarity" if "query_similarity" in cosines else "similarity"
    best_similarity = max((r[own] for r in rows.values()), default=0.0)
    return Pool(
        items=items,
        lists=lists,
        temporal=temporal,
        graph_adjacency=graph.neighbours_from_edges(edges),
        fallback=fallback,
        best_similarity=best_similarity,
        plan=plan,
        timings=timings,
    )


def _passage_cosine(on: Callable[[str], bool]) -> str:
    """What a memory's passages add to its semantic evidence: its sentences, and a dialog
    turn's previous-turn pair unless that stage is off."""
    return retrieve.PASSAGE_COSINE if on("previous_turn") else retrieve.SENTENCE_COSINE


def _successors(scope: Scope, vector: np.ndarray) -> list[tuple[str, float]]:
    """The current successors of superseded memories that match (pipeline/validity.py),
    those that pass the scope."""
    found = validity.successors(scope, vector, POOL)
    allowed = retrieve.in_scope(scope, [k for k, _ in found]) if found else set()
    return [(k, s) for k, s in found if k in allowed]


def _seeds(lists: Mapping[str, list[tuple[str, float]]]) -> dict[str, float]:
    """The best few hits across strategies, scored 1/rank, as graph seeds."""
    seeds: dict[str, float] = {}
    for hits in lists.values():
        for rank, (key, _) in enumerate(hits[:GRAPH_SEEDS], start=1):
            seeds[key] = max(seeds.get(key, 0.0), 1.0 / rank)
    return dict(sorted(seeds.items(), key=lambda kv: -kv[1])[:GRAPH_SEEDS])


def _feedback_vector(vector: np.ndarray, seeds: Mapping[str, float]) -> np.ndarray | None:
    """The query moved towards the first hits (the graph seeds: the best few of each list)."""
    vectors = retrieve.fetch_embeddings(list(seeds))
    return feedback.feedback_vector(vector, [vectors[k] for k in seeds if k in vectors])


def _best_passage(raw: dict, rows: dict, own_vector_only: bool) -> None:
    """A memory's semantic evidence is its own cosine or its best passage's, whichever is
    higher (apps/memories/passages.py). The confidence estimate keeps reading the whole
    memory's cosine to the query's own vector (it was calibrated on that): when the semantic
    strategies match the query's own vector, that cosine is kept as "_query_similarity"."""
    for k, r in rows.items():
        if own_vector_only:
            raw[k]["_query_similarity"] = r["similarity"]
        raw[k]["_similarity"] = max(r["similarity"], r.get("passage", 0.0))


def _ranked(key: str, row: dict, score: float, ranks: dict, raw: dict) -> Ranked:
    return Ranked(
        id=key,
        score=score,
        fused=score,
        ranks=ranks,
        raw=raw,
        created_at=row["created_at"],
        external_id=row["external_id"],
        file_path=row["file_path"],
        tier=row["tier"],
        importance=row["importance"],
        stability=row["stability"],
        pagerank=row["pagerank"],
        tags=row["tags"],
        asks=row.get("asks", False),
    )


def _complete_scores(raw, lists, use_lexical: bool, use_semantic: bool) -> dict:
    """Every candidate scored by every strategy, min-max scaled over the pool."""
    normalized: dict[str, dict[str, float]] = {}
    if use_lexical:
        normalized["keyword"] = fuse.minmax({k: r["_lexical"] for k, r in raw.items()})
    if use_semantic:
        normalized["semantic"] = fuse.minmax({k: r["_similarity"] for k, r in raw.items()})
    if feedback.STRATEGY in lists:
        normalized[feedback.STRATEGY] = fuse.minmax(
            {k: r.get("_feedback", 0.0) for k, r in raw.items()}
        )
    for strategy in ("exact", "graph", validity.STRATEGY):
        if lists.get(strategy):
            top = max(s for _, s in lists[strategy]) or 1.0
            normalized[strategy] = {k: s / top for k, s in lists[strategy] if k in raw}
    return normalized
