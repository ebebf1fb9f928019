"""Stages 3 and 4 for one query text: retrieve per strategy, complete every candidate's
scores, borrow dialog context, fuse. search() runs this once per query variant and hands the
pool's Ranked items (score = fused score) to the re-ranking stages.

A new retrieval strategy adds its list to `StrategyLists.lists` (and its weight to
`StrategyLists.weights`) in `_first_lists` or `_seeded_lists`; the row fetch, normalization and
fusion take it from there (its scores are scaled by its best hit unless `_complete_scores` says
otherwise)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from apps.search.timing import Timer
from apps.search.types import CandidateRow, Evidence, Hit, QueryAnalysis, Ranked, adopted

from . import coactivate, context, feedback, fuse, graph, validity, wordforms
from .reads.beside import beside
from .reads.edges import Edge
from .reads.exact import exact_search
from .reads.lexical import LexicalPlan, lexical_plan, lexical_search
from .reads.namespace_vectors import micros_of, temporal_rows
from .reads.neighbours import window_rows
from .reads.rows import fetch_embeddings, fetch_rows, in_scope
from .reads.semantic import PASSAGE_COSINE, SENTENCE_COSINE, semantic_search
from .scope import Scope

# The settings read the pipeline's rules, so the pipeline names them for types only.
if TYPE_CHECKING:
    from apps.search.config import SearchSettings

POOL = 100  # candidates per strategy
EXACT_POOL = 50
GRAPH_SEEDS = 5

Hits = list[tuple[str, float]]  # (id, raw score), best first


@dataclass
class Pool:
    """What retrieval found for one query text; `items` carry the fused score."""

    items: dict[str, Ranked]
    lists: dict[str, Hits]  # strategy -> [(id, raw score)] as retrieved
    temporal: dict[str, tuple[str, ...]]
    graph_adjacency: dict[str, list[tuple[str, float]]]
    fallback: bool = False
    best_similarity: float = 0.0
    plan: LexicalPlan | None = None
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def fused(self) -> dict[str, float]:
        return {k: r.score for k, r in self.items.items()}


@dataclass(frozen=True)
class KeywordHits:
    """The keyword strategy's plan and candidates for one query text."""

    plan: LexicalPlan
    hits: list[Hit]


def keyword_hits(text: str, scope: Scope, config: SearchSettings) -> KeywordHits:
    # The budget counts the namespace's memories; under a filter most of them fall outside the
    # scope, and the pool could come up short.
    budget = 0 if scope.filtered else config.lexical_row_budget
    forms = wordforms.other_forms(text) if config.on("wordforms") else ""
    plan = lexical_plan(
        text,
        scope.namespace_id,
        config.lexical_common_rows,
        row_budget=budget,
        pool=POOL,
        forms=forms,
        scope=scope,
    )
    return KeywordHits(plan, lexical_search(scope, plan, POOL))


@dataclass(frozen=True)
class Query:
    """One query text as the strategies see it. `vector` is what the semantic strategies
    match (the focused query's, see pipeline/focus.py); `passages` the passage evidence the
    semantic scan ranks by and the row fetch scores by, or None."""

    text: str
    vector: np.ndarray | None
    analysis: QueryAnalysis
    scope: Scope
    config: SearchSettings
    semantic_only: bool
    use_lexical: bool
    use_semantic: bool
    passages: str | None


@dataclass
class StrategyLists:
    """The strategies' lists for one query text, before the row fetch."""

    lists: dict[str, Hits]
    weights: dict[str, float]
    plan: LexicalPlan | None = None
    fallback: bool = False
    feedback_vector: np.ndarray | None = None
    edges: list[Edge] = field(default_factory=list)


@dataclass
class FetchedCandidates:
    """Every candidate's row (the hits' and their context turns') and the temporal windows."""

    rows: dict[str, CandidateRow]
    temporal: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # the line the context windows are cut from, when a candidate is on it (context stage)
    chain: context.Chain | None = None


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
    """`query_vector`, when it differs from `vector`, is the query's own, whose cosines the
    confidence estimate reads (it was calibrated on them). `keyword`: the keyword strategy's
    result for `text` when the caller already ran it (while the query was being embedded)."""
    timer = Timer()
    query = _query(text, vector, analysis, scope, weights, config, semantic_only)
    found = StrategyLists(lists={}, weights=dict(weights))
    # search() reads the kept vectors' check once for all of this (namespace_vectors).
    _first_lists(query, found, timer, keyword)
    _seeded_lists(query, found, timer, graph_enabled)
    cosines = {}
    if found.feedback_vector is not None:
        cosines["feedback"] = found.feedback_vector
    if query_vector is not None and vector is not None and query_vector is not vector:
        cosines["query_similarity"] = query_vector
    done = _complete(query, found, cosines, timer)
    with timer.span("fuse"):
        items = _fused(query, found, done, cosines)
    return Pool(
        items=items,
        lists=found.lists,
        temporal=done.temporal,
        graph_adjacency=graph.neighbours_from_edges(found.edges),
        fallback=found.fallback,
        best_similarity=max((r.measured.own_similarity for r in items.values()), default=0.0),
        plan=found.plan,
        timings=timer.timings,
    )


def _fused(
    query: Query, found: StrategyLists, done: FetchedCandidates, cosines: Mapping[str, Any]
) -> dict[str, Ranked]:
    """Every candidate's evidence, scaled per strategy, with context borrowed, fused."""
    config = query.config
    evidence = {
        k: _evidence(
            r, passages=bool(query.passages), own_vector_only="query_similarity" not in cosines
        )
        for k, r in done.rows.items()
    }
    keys = list(evidence)
    normalized = _complete_scores(
        keys, evidence, found.lists, query.use_lexical, query.use_semantic
    )
    if config.on("context") and done.chain is not None:
        normalized = context.with_context(normalized, done.chain.rows(keys, context.CONTEXT_REACH))
    fused = fuse.fuse_pool(
        config.fusion_used,
        normalized=normalized,
        lists=found.lists,
        weights=found.weights,
        pool=keys,
        vector_weight=config.hybrid_vector_weight,
    )
    return _ranked_items(
        done.rows, found.lists, dict(zip(keys, fused.tolist(), strict=True)), evidence
    )


def _query(
    text: str,
    vector: np.ndarray | None,
    analysis: QueryAnalysis,
    scope: Scope,
    weights: Mapping[str, float],
    config: SearchSettings,
    semantic_only: bool,
) -> Query:
    on = config.on
    use_semantic = on("semantic") and vector is not None and weights.get("semantic", 0) > 0
    return Query(
        text=text,
        vector=vector,
        analysis=analysis,
        scope=scope,
        config=config,
        semantic_only=semantic_only,
        use_lexical=on("lexical") and not semantic_only and weights.get("keyword", 0) > 0,
        use_semantic=use_semantic,
        passages=_passage_cosine(on) if on("passages") and use_semantic else None,
    )


def _first_lists(q: Query, found: StrategyLists, timer: Timer, keyword: KeywordHits | None) -> None:
    """The strategies that search from the query alone: keyword, semantic, the successors of
    superseded matches, exact phrases."""
    on, scope = q.config.on, q.scope
    if q.use_lexical:
        lexical = keyword or timer("lexical", keyword_hits, q.text, scope, q.config)
        found.plan = lexical.plan
        found.lists["keyword"] = [(h.id, h.score) for h in lexical.hits]
    if q.use_semantic:
        semantic, found.fallback = timer("semantic", _semantic, q, q.vector, q.passages)
        found.lists["semantic"] = [(h.id, h.score) for h in semantic]
    if on("successors") and q.use_semantic:
        successors = timer("successors", _successors, scope, q.vector)
        if successors:
            found.lists[validity.STRATEGY] = successors
            found.weights[validity.STRATEGY] = found.weights.get("semantic", 0.0)
    analysis = q.analysis
    phrases = [*analysis.phrases, *(e for e in analysis.entities if e not in analysis.tag_entities)]
    if on("exact") and not q.semantic_only and phrases:
        exact = timer("exact", exact_search, scope, phrases, EXACT_POOL)
        found.lists["exact"] = [(h.id, h.score) for h in exact]


def _seeded_lists(q: Query, found: StrategyLists, timer: Timer, graph_enabled: bool) -> None:
    """The strategies that start from the first hits (the graph seeds): the feedback vector
    and the graph walk (or, for co-activation alone, the seeds' edges)."""
    on, config = q.config.on, q.config
    seeds = _seeds(found.lists)
    if on("feedback") and config.feedback_share > 0 and q.use_semantic and seeds:
        found.feedback_vector = timer("feedback", _feedback_vector, q.vector, seeds, q.scope)
    if found.feedback_vector is not None:
        ef = config.feedback_ef_search or config.hnsw_ef_search
        hits, _ = timer("feedback", _semantic, q, found.feedback_vector, None, ef)
        found.lists[feedback.STRATEGY] = [(h.id, h.score) for h in hits]
        semantic_weight = found.weights.get("semantic", 0.0)
        found.weights[feedback.STRATEGY] = config.feedback_share * semantic_weight
    if on("graph") and graph_enabled and not q.semantic_only and seeds:
        found.edges = timer("graph", graph.fetch_edges, q.scope.namespace_id, seeds, scope=q.scope)
        reached = graph.walk(seeds, found.edges)
        allowed = in_scope(q.scope, list(reached))  # graph hits pass the filters too
        ranked = sorted(((k, v) for k, v in reached.items() if k in allowed), key=lambda kv: -kv[1])
        found.lists["graph"] = ranked[:POOL]
    elif on("coactivation") and seeds:
        found.edges = timer("graph", graph.fetch_edges, q.scope.namespace_id, seeds, 1, q.scope)


def _semantic(
    q: Query, vector: np.ndarray, passages: str | None, ef_search: int | None = None
) -> tuple[list[Hit], bool]:
    return semantic_search(
        q.scope,
        vector,
        POOL,
        exact_max=q.config.exact_scan_max,
        ef_search=q.config.hnsw_ef_search if ef_search is None else ef_search,
        passages=passages,
    )


def _complete(
    q: Query, found: StrategyLists, cosines: Mapping[str, np.ndarray], timer: Timer
) -> FetchedCandidates:
    """The rows of every candidate, then (for the context and co-activation stages) their
    temporal neighbours and the rows of the context turns not yet fetched. A kept namespace
    gives the neighbours before any row is read, so the context turns join the candidates'
    row fetch: one statement, where any other namespace needs two."""
    on = q.config.on
    pool = list(dict.fromkeys(k for hits in found.lists.values() for k, _ in hits))

    def fetch(ids: list[str]) -> dict[str, CandidateRow]:
        return timer(
            "fetch", fetch_rows, ids, found.plan, q.vector, cosines, q.passages, scope=q.scope
        )

    if not ((on("context") or on("coactivation")) and pool):
        return FetchedCandidates(rows=fetch(pool))
    kept = timer("neighbours", temporal_rows, q.scope, pool, coactivate.MAX_GAP)
    if kept is not None:
        done, extra = _windows(q, pool, kept, micros_of(coactivate.MAX_GAP), set(pool), timer)
        rows = fetch(pool + extra)
        if not any(k in rows for k in pool):  # as below: no candidate left, no window
            return FetchedCandidates(rows={})
        done.rows = rows
        return done
    waiting = beside(window_rows, q.scope, pool, coactivate.MAX_GAP.total_seconds(), by_id=True)
    rows = fetch(pool)
    window = timer("neighbours", lambda: coactivate.in_order(waiting()))
    if not rows:
        return FetchedCandidates(rows=rows)
    done, extra = _windows(q, pool, window, coactivate.MAX_GAP, rows, timer)
    done.rows = rows
    if extra:
        rows.update(fetch(extra))
    return done


def _windows(
    q: Query,
    pool: list[str],
    window: list[tuple[str, Any, str | None]],
    gap: Any,
    known: Collection[str],
    timer: Timer,
) -> tuple[FetchedCandidates, list[str]]:
    """The temporal neighbours and context chain read from the candidates' neighbours' rows
    (in coactivate's order; `gap` the largest in their times' unit), and the context turns
    not among `known` (beyond the adjacent ones only inside a session, fetched whole; without
    the context stage, the adjacent memories), which join the pool. The rows are the
    caller's to fill in."""
    on = q.config.on
    done = FetchedCandidates(rows={})
    with timer.span("context"):
        linked = coactivate.links(window, gap)
        chain = context.Chain.of(window, linked)
        done.temporal = coactivate.neighbours_on_line(chain.ids, linked)
        reach = context.CONTEXT_REACH if on("context") else 1
        extra = chain.missing(pool, known, reach)
        if on("context") and any(k in chain.position for k in pool):
            done.chain = chain
    return done, extra


def _passage_cosine(on: Callable[[str], bool]) -> str:
    """What a memory's passages add to its semantic evidence: its sentences, and a dialog
    turn's previous-turn pair unless that stage is off."""
    return PASSAGE_COSINE if on("previous_turn") else SENTENCE_COSINE


def _successors(scope: Scope, vector: np.ndarray) -> Hits:
    """The current successors of superseded memories that match (pipeline/validity.py),
    those that pass the scope."""
    found = validity.successors(scope, vector, POOL)
    allowed = in_scope(scope, [k for k, _ in found]) if found else set()
    return [(k, s) for k, s in found if k in allowed]


def _seeds(lists: Mapping[str, Hits]) -> dict[str, float]:
    """The best few hits across strategies, scored 1/rank, as graph seeds."""
    seeds: dict[str, float] = {}
    for hits in lists.values():
        for rank, (key, _) in enumerate(hits[:GRAPH_SEEDS], start=1):
            seeds[key] = max(seeds.get(key, 0.0), 1.0 / rank)
    return dict(sorted(seeds.items(), key=lambda kv: -kv[1])[:GRAPH_SEEDS])


def _feedback_vector(
    vector: np.ndarray, seeds: Mapping[str, float], scope: Scope
) -> np.ndarray | None:
    """The query moved towards the first hits (the graph seeds: the best few of each list)."""
    vectors = fetch_embeddings(list(seeds), scope)
    return feedback.feedback_vector(vector, [vectors[k] for k in seeds if k in vectors])


def _evidence(row: CandidateRow, *, passages: bool, own_vector_only: bool) -> Evidence:
    """A memory's semantic evidence is its own cosine or, with passages, its best passage's,
    whichever is higher (apps/memories/passages.py). The confidence estimate keeps reading
    the whole memory's cosine to the query's own vector (it was calibrated on that): when the
    semantic strategies match the query's own vector, that cosine is kept as
    `query_similarity`."""
    query_similarity = row.cosines.get("query_similarity")
    similarity = row.similarity
    if passages:
        if own_vector_only:
            query_similarity = row.similarity
        similarity = max(row.similarity, row.cosines.get("passage", 0.0))
    return adopted(
        Evidence,
        {
            "lexical": row.lexical,
            "similarity": similarity,
            "feedback": row.cosines.get("feedback"),
            "query_similarity": query_similarity,
        },
    )


def _ranked_items(
    rows: Mapping[str, CandidateRow],
    lists: Mapping[str, Hits],
    fused: Mapping[str, float],
    evidence: Mapping[str, Evidence],
) -> dict[str, Ranked]:
    """One Ranked item per fetched row, carrying its fused score, its rank and raw score in
    each list that found it, and its evidence."""
    ranks: dict[str, dict[str, int]] = {k: {} for k in rows}
    raw: dict[str, dict[str, float]] = {k: {} for k in rows}
    for strategy, hits in lists.items():
        for rank, (key, score) in enumerate(hits, start=1):
            if key in rows:
                ranks[key][strategy] = rank
                raw[key][strategy] = score
    return {
        k: _ranked(k, r, fused.get(k, 0.0), ranks[k], raw[k], evidence[k]) for k, r in rows.items()
    }


def _ranked(
    key: str,
    row: CandidateRow,
    score: float,
    ranks: dict[str, Any],
    raw: dict[str, Any],
    evidence: Evidence,
) -> Ranked:
    state = {
        "id": key,
        "score": score,
        "fused": score,
        "ranks": ranks,
        "raw": raw,
        "evidence": evidence,
        "reasons": (),
        "boosts": (),
        "created_at": row.created_at,
        "external_id": row.external_id,
        "file_path": row.file_path,
        "tier": row.tier,
        "importance": row.importance,
        "stability": row.stability,
        "pagerank": row.pagerank,
        "tags": row.tags,
        "asks": row.asks,
        "embedding": None,
    }
    return adopted(Ranked, state)


def _complete_scores(
    keys: list[str],
    evidence: Mapping[str, Evidence],
    lists: Mapping[str, Hits],
    use_lexical: bool,
    use_semantic: bool,
) -> dict[str, npt.NDArray[np.float64]]:
    """Every candidate (`keys`, the pool's order) scored by every strategy, min-max scaled
    over the pool; a list's own scores scaled by its best hit, 0 for a memory it missed."""
    found = [evidence[k] for k in keys]
    normalized: dict[str, npt.NDArray[np.float64]] = {}
    if use_lexical:
        normalized["keyword"] = fuse.minmax(np.array([e.lexical for e in found], dtype=np.float64))
    if use_semantic:
        similarity = np.array([e.similarity for e in found], dtype=np.float64)
        normalized["semantic"] = fuse.minmax(similarity)
    if feedback.STRATEGY in lists:
        scores = np.array([e.feedback or 0.0 for e in found], dtype=np.float64)
        normalized[feedback.STRATEGY] = fuse.minmax(scores)
    position = {k: i for i, k in enumerate(keys)}
    for strategy in ("exact", "graph", validity.STRATEGY):
        if lists.get(strategy):
            top = max(s for _, s in lists[strategy]) or 1.0
            column = np.zeros(len(keys))
            for k, s in lists[strategy]:
                if k in position:
                    column[position[k]] = s / top
            normalized[strategy] = column
    return normalized
