"""Candidate scoring for one query text: retrieve per strategy, complete every candidate's
scores, add dialog context, fuse. search() (services.py) runs this once per query variant
and then applies the re-ranking stages."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from django.conf import settings

from .pipeline import coactivate as co
from .pipeline import fuse, graph, retrieve
from .pipeline.scope import Scope
from .types import Candidate, QueryAnalysis

POOL = 100  # candidates per strategy
EXACT_POOL = 50
GRAPH_SEEDS = 5


@dataclass
class Scored:
    fused: dict[str, float]
    candidates: dict[str, Candidate]
    lists: dict[str, list[tuple[str, float]]]  # strategy -> [(id, raw score)] as retrieved
    temporal: dict[str, tuple[str, ...]]
    graph_adjacency: dict[str, list[tuple[str, float]]]
    fallback: bool = False
    best_similarity: float = 0.0
    plan: retrieve.LexicalPlan | None = None
    timings: dict[str, float] = field(default_factory=dict)


class Timer:
    def __init__(self, timings: dict[str, float]):
        self.timings = timings

    def __call__(self, name: str, fn: Callable, *args, **kwargs):
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            ms = (time.perf_counter() - start) * 1000
            self.timings[name] = round(self.timings.get(name, 0.0) + ms, 2)


def score_query(
    *,
    text: str,
    vector: np.ndarray | None,
    analysis: QueryAnalysis,
    scope: Scope,
    weights: dict[str, float],
    enabled: dict[str, bool],
    on: Callable[[str], bool],
    semantic_only: bool = False,
) -> Scored:
    timings: dict[str, float] = {}
    timer = Timer(timings)
    lists: dict[str, list[tuple[str, float]]] = {}
    use_lexical = on("lexical") and not semantic_only and weights.get("keyword", 0) > 0
    use_semantic = on("semantic") and vector is not None and weights.get("semantic", 0) > 0
    plan = (
        timer("lexical", retrieve.lexical_plan, text, scope.namespace_id) if use_lexical else None
    )
    if plan is not None:
        hits = timer("lexical", retrieve.lexical_search, scope, plan, POOL)
        lists["keyword"] = [(h.id, h.score) for h in hits]
    fallback = False
    if use_semantic:
        hits, fallback = timer("semantic", retrieve.semantic_search, scope, vector, POOL)
        lists["semantic"] = [(h.id, h.score) for h in hits]
    phrases = list(analysis.phrases) + [
        e for e in analysis.entities if e not in analysis.tag_entities
    ]
    if on("exact") and not semantic_only and phrases:
        hits = timer("exact", retrieve.exact_search, scope, phrases, EXACT_POOL)
        lists["exact"] = [(h.id, h.score) for h in hits]
    seeds = _seeds(lists)
    edges: list = []
    if on("graph") and enabled.get("graph") and not semantic_only and seeds:
        edges = timer("graph", graph.fetch_edges, scope.namespace_id, seeds)
        reached = graph.walk(seeds, edges)
        allowed = retrieve.in_scope(scope, list(reached))  # graph hits pass the filters too
        ranked = sorted(((k, v) for k, v in reached.items() if k in allowed), key=lambda kv: -kv[1])
        lists["graph"] = ranked[:POOL]
    elif on("coactivation") and seeds:
        edges = timer("graph", graph.fetch_edges, scope.namespace_id, seeds, 1)
    pool = list(dict.fromkeys(k for hits in lists.values() for k, _ in hits))
    rows = timer("fetch", retrieve.fetch_rows, pool, plan, vector)
    temporal: dict[str, tuple[str, ...]] = {}
    if (on("context") or on("coactivation")) and rows:
        times = [r["created_at"] for r in rows.values()]
        window = timer("neighbours", retrieve.window_rows, scope, times, co.MAX_GAP.total_seconds())
        temporal = co.temporal_neighbours(window)
        extra = [n for k in pool for n in temporal.get(k, ()) if n not in rows]
        extra = list(dict.fromkeys(extra))
        if extra:
            rows.update(timer("fetch", retrieve.fetch_rows, extra, plan, vector))
    candidates = {k: _candidate(k, r) for k, r in rows.items()}
    for strategy, hits in lists.items():
        for rank, (key, raw) in enumerate(hits, start=1):
            if key in candidates:
                candidates[key].ranks[strategy] = rank
                candidates[key].raw[strategy] = raw
    normalized = _complete_scores(candidates, lists, vector, use_lexical, use_semantic)
    if on("context") and temporal:
        for strategy in ("keyword", "semantic"):
            if strategy in normalized:
                borrowed = co.borrow_context(normalized[strategy], temporal, co.CONTEXT_SHARE)
                normalized[strategy] = fuse.minmax(borrowed)
    active = {s: w for s, w in weights.items() if s in normalized}
    if getattr(settings, "SEARCH_FUSION", "score") == "weighted_sum":
        # the plain mode: hybrid_vector_weight x semantic + the rest x keyword, no adaptation
        vector_weight = float(getattr(settings, "HYBRID_VECTOR_WEIGHT", 0.3))
        plain = {"semantic": vector_weight, "keyword": 1.0 - vector_weight}
        fused = fuse.score_fusion(
            {k: v for k, v in normalized.items() if k in plain}, plain, candidates
        )
    elif on("score_fusion"):
        fused = fuse.score_fusion(normalized, active, candidates)
    else:
        rankings = {s: {k: r for r, (k, _) in enumerate(h, 1)} for s, h in lists.items()}
        fused = fuse.weighted_rrf(rankings, active)
        fused = {k: fused.get(k, 0.0) for k in candidates}
    best_similarity = max((c.raw.get("_similarity", 0.0) for c in candidates.values()), default=0.0)
    return Scored(
        fused=fused,
        candidates=candidates,
        lists=lists,
        temporal=temporal,
        graph_adjacency=graph.neighbours_from_edges(edges),
        fallback=fallback,
        best_similarity=best_similarity,
        plan=plan,
        timings=timings,
    )


def _seeds(lists: dict[str, list[tuple[str, float]]]) -> dict[str, float]:
    """The best few hits across strategies, scored 1/rank, as graph seeds."""
    seeds: dict[str, float] = {}
    for hits in lists.values():
        for rank, (key, _) in enumerate(hits[:GRAPH_SEEDS], start=1):
            seeds[key] = max(seeds.get(key, 0.0), 1.0 / rank)
    return dict(sorted(seeds.items(), key=lambda kv: -kv[1])[:GRAPH_SEEDS])


def _candidate(key: str, row: dict) -> Candidate:
    return Candidate(
        id=key,
        created_at=row["created_at"],
        external_id=row["external_id"],
        file_path=row["file_path"],
        tier=row["tier"],
        importance=row["importance"],
        stability=row["stability"],
        pagerank=row["pagerank"],
        tags=row["tags"],
        raw={"_lexical": row["lexical"], "_similarity": row["similarity"]},
    )


def _complete_scores(candidates, lists, vector, use_lexical, use_semantic) -> dict:
    """Every candidate scored by every strategy, min-max scaled over the pool."""
    normalized: dict[str, dict[str, float]] = {}
    if use_lexical:
        normalized["keyword"] = fuse.minmax({k: c.raw["_lexical"] for k, c in candidates.items()})
    if use_semantic:
        sims = {k: c.raw["_similarity"] for k, c in candidates.items()}
        normalized["semantic"] = fuse.minmax(sims)
    for strategy in ("exact", "graph"):
        if lists.get(strategy):
            top = max(s for _, s in lists[strategy]) or 1.0
            normalized[strategy] = {k: s / top for k, s in lists[strategy] if k in candidates}
    return normalized
