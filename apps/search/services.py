"""search(): the one entry point MCP, REST, the UI and the benchmarks call (SPEC section 4).

This module only composes the stages in SPEC's order and times them; each stage's rule lives
in its own module under pipeline/. Re-rankers share one contract: they take a list of frozen
`Ranked` items and return a new list.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
from django.db import InterfaceError, OperationalError
from django.utils import timezone

from apps.core import metrics
from apps.core.exceptions import ValidationFailed
from apps.vectors.embeddings import embed_queries_soon, model_name
from memoryhub.replica.routing import replica_configured

from . import querylog
from .config import SearchSettings, search_settings
from .params import SearchRequest
from .pipeline import (
    boost,
    coactivate,
    confidence,
    contradictions,
    diversify,
    focus,
    fuse,
    mmr,
    rerank_learned,
    session,
    why,
)
from .pipeline import variants as query_variants
from .pipeline.analyse import analyse_query, find_entities
from .pipeline.candidates import KeywordHits, Pool, gather, keyword_hits
from .pipeline.reads import chains as chain_reads
from .pipeline.reads import namespace_vectors
from .pipeline.reads.exact import exact_search
from .pipeline.reads.rows import browse, fetch_rows, mention_times, with_embeddings
from .pipeline.reads.stats import namespace_tags
from .pipeline.reads.weights import learned_weights
from .pipeline.scope import Scope
from .pipeline.weights import (
    BASE_WEIGHTS,
    adapt_weights,
    apply_multipliers,
    intent_profile,
)
from .response import (
    SearchResponse,
    Trace,
    contradicting_pairs,
    explain,
    log_fields,
    payload,
    payload_rows,
    render_markdown,
)
from .timing import Timer, elapsed_ms
from .types import QueryAnalysis, Ranked

__all__ = ["SearchResponse", "render_markdown", "search"]

logger = logging.getLogger(__name__)

Stage = tuple[str, Callable[[list[Ranked]], list[Ranked]]]
# (the vector the semantic strategies match, the query's own); None in exact mode
Vectors = tuple[np.ndarray | None, np.ndarray | None]


@dataclass
class SearchDecisions:
    """What one search decided, for the response, the explain view and the query log."""

    ranked: list[Ranked]
    analysis: QueryAnalysis | None = None
    pool: Pool | None = None
    weights: dict[str, float] = field(default_factory=dict)
    adapted: dict[str, float] = field(default_factory=dict)
    learned: dict[str, float] = field(default_factory=dict)
    rules: list[str] = field(default_factory=list)
    graph_enabled: bool = False
    verdict: confidence.Verdict | None = None
    vector: np.ndarray | None = None  # the query's own embedding
    chain: why.Chain | None = None  # the why path's chain (why and effect questions only)


def search(
    request: SearchRequest | None = None,
    /,
    *,
    log: bool = True,
    config: SearchSettings | None = None,
    causal: str | None = None,
    **arguments: Any,
) -> SearchResponse:
    """Run one search. `request` is a SearchRequest (apps/search/params.py); callers that
    hold raw arguments pass them as keywords instead and they are validated into one.
    `config` replaces the settings-built SearchSettings for this call (evaluate, bench).
    `causal` ("cause" or "effect") follows the why path whatever the query's wording
    (memory_why); left out, only questions that read as why or effect questions do."""
    started = time.perf_counter()
    if request is not None and arguments:
        raise TypeError("search() takes a SearchRequest or keyword arguments, not both")
    params = request if request is not None else SearchRequest.build(**arguments)
    if causal not in (None, why.CAUSE, why.EFFECT):
        raise ValidationFailed({"causal": f"Must be {why.CAUSE} or {why.EFFECT}."})
    cfg = (config or search_settings()).without(params.disabled)
    scope = _scope(params)
    timer = Timer()
    trace = Trace() if params.include_debug else None
    relations = None  # those of the namespace's links, when the process keeps them
    if not params.query:  # filters only: newest first, nothing to rank or judge
        outcome = SearchDecisions(ranked=browse(scope, params.limit))
    else:
        # Every read of the namespace's kept vectors in this search: one check of them.
        with namespace_vectors.checked_once():
            outcome = _rank(params, cfg, scope, timer, trace, causal)
            relations = namespace_vectors.edge_relations(scope)
    ranked, verdict, pool = outcome.ranked, outcome.verdict, outcome.pool
    with timer.span("payload"):
        rows = payload_rows(ranked, as_of=params.as_of, relations=relations)
    with timer.span("contradictions"):
        pairs = (
            contradictions.find(ranked, contradicting_pairs(rows))
            if _checks_contradictions(cfg, ranked)
            else []
        )
    flags = {
        "evidence_gap": bool(verdict and verdict.evidence_gap),
        "fallback_retry": bool(pool.fallback) if pool else False,
        "contradictions": [list(p) for p in pairs],
    }
    with timer.span("payload"):
        now = scope.valid_at or timezone.now()
        memories = payload(ranked, rows, pairs, as_of=params.as_of, now=now)
        path = _path(outcome.chain, memories)
    latency = elapsed_ms(started)
    debug = _debug(params, cfg, outcome, trace, timer.timings, latency, path)
    metrics.observe_search(timer.timings, latency)
    log_id = (
        timer("log", _log, params, cfg, outcome, flags, timer.timings, latency) if log else None
    )
    text_budget = params.token_budget
    if text_budget is None and cfg.on("budget"):
        text_budget = cfg.token_budget
    return SearchResponse(
        memories=memories,
        total=len(memories),
        query=params.query,
        mode=params.mode,
        flags=flags,
        debug=debug,
        query_log_id=log_id,
        text_budget=text_budget,
        confidence=round(verdict.confidence, 4) if verdict else None,
        signals=verdict.signals.as_dict() if verdict and verdict.signals else None,
        path=path,
    )


def _path(chain: why.Chain | None, memories: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The chain as the response carries it, titled as the results are (a memory on the chain
    that the limit left out is titled from its row)."""
    if chain is None:
        return []
    titles = {m["id"]: m["title"] for m in memories if m.get("title")}
    untitled = [i for i in chain.ids if i not in titles]
    return why.path_payload(chain, {**chain_reads.titles(untitled), **titles})


def _checks_contradictions(cfg: SearchSettings, ranked: list[Ranked]) -> bool:
    """Whether stage 11 looks for contradictions among the results."""
    return cfg.on("contradictions") and bool(ranked)


def _scope(req: SearchRequest) -> Scope:
    """Stage 1: the namespace, the caller's filters and the moment the search reads."""
    return Scope(
        namespace_id=req.namespace.id,
        tags=req.tags,
        categories=req.categories,
        file_path=req.file_path,
        person=req.person,
        credential=req.credential,
        door=req.door,
        after=req.after,
        before=req.before,
        valid_at=None if req.include_superseded else (req.as_of or timezone.now()),
        learnt_by=req.as_of,
    )


def _rank(
    req: SearchRequest,
    cfg: SearchSettings,
    scope: Scope,
    timer: Timer,
    trace: Trace | None,
    causal: str | None = None,
) -> SearchDecisions:
    """Stages 2-10 for a query text: understand it, then rank (exact mode: match it)."""
    outcome, vectors, keyword = _analysed_query(req, cfg, scope, timer)
    analysis = outcome.analysis
    assert analysis is not None  # _analysed_query always sets it
    if req.mode == "exact":
        outcome.ranked = _exact(scope, req)
        outcome.verdict = confidence.Verdict(1.0 if outcome.ranked else 0.0, not outcome.ranked)
        return outcome
    pool, items = _candidates(
        req, cfg, scope, analysis, vectors, outcome.weights, outcome.graph_enabled, keyword
    )
    outcome.pool = pool
    timer.timings.update(pool.timings)
    if trace is not None:
        trace.record("fused", sorted(items, key=lambda r: (-r.fused, r.id)))
    ordered = _run(_boosts(req, cfg, analysis, pool), items, timer, trace)
    if cfg.on("confidence"):
        outcome.verdict = timer("confidence", _judge, ordered, pool, cfg)
    if cfg.on("learned_rank"):  # after the verdict: it was calibrated on the boosted order
        rerank = partial(rerank_learned.rerank, analysis=analysis, temporal=pool.temporal)
        ordered = _run([("learned_rank", rerank)], ordered, timer, trace)
    final = _run(_diversity(req, cfg, analysis, scope), ordered, timer, trace)
    direction = causal or analysis.causal
    if direction and cfg.on("why"):  # only why and effect questions pay for the why path
        with timer.span("why"):
            final, outcome.chain = why.follow(final, scope, direction)
        if trace is not None:
            trace.record("why", final)
    outcome.ranked = final[: req.limit]
    return outcome


def _analysed_query(
    req: SearchRequest, cfg: SearchSettings, scope: Scope, timer: Timer
) -> tuple[SearchDecisions, Vectors, KeywordHits | None]:
    """Stage 2: the query's entities, its focused text, its vectors (embedded on the
    encoder's thread while the keyword query runs here), its analysis and the strategy
    weights. Returns the decisions so far, (the vector the semantic strategies match, the
    query's own) and the keyword hits found meanwhile (None when the keyword stage is off)."""
    with timer.span("focus"):
        known_tags = namespace_tags(req.namespace.id) if cfg.on("analyse") else ()
        # Found once: the focus stage and the query analysis both read them (one pass over
        # the namespace's tag names per search, not two).
        entities = find_entities(req.query, known_tags)
        focused = _focus_text(req.query, entities["tags"]) if cfg.on("focus") else None
    vector = match_vector = None
    waiting = _embed_soon(req.query, focused) if req.mode != "exact" else None
    keyword: KeywordHits | None = None
    if req.mode not in ("exact", "semantic") and cfg.on("lexical"):
        # While the encoder works on its own thread, the keyword query runs here; it needs
        # the text alone.
        keyword = timer("lexical", keyword_hits, req.query, scope, cfg)
    with timer.span("embed"):  # what is left to wait for after the keyword query
        if waiting is not None:
            vector, match_vector = waiting()
    with timer.span("analyse"):
        analysis = analyse_query(
            req.query,
            vector=vector,
            model_name=model_name(),
            now=req.now or timezone.now(),
            known_tags=known_tags,
            enabled=cfg.on("analyse"),
            entities=entities,
        )
        outcome = _decisions_with_weights(analysis, cfg, req.namespace.id)
    outcome.vector = vector
    return outcome, (match_vector, vector), keyword


def _run(
    stages: list[Stage], items: list[Ranked], timer: Timer, trace: Trace | None
) -> list[Ranked]:
    """Apply the stages in order, timing each under its name (and recording the order each
    one left, for the explain view)."""
    for name, stage in stages:
        items = timer(name, stage, items)
        if trace is not None:
            trace.record(name, items)
    return items


def _focus_text(query: str, tag_names: Sequence[str]) -> str | None:
    """The text the semantic strategies match when the query names tags of the namespace
    (pipeline/focus.py); None: the query's own."""
    return focus.without_entities(query, tag_names) if tag_names else None


def _embed_soon(query: str, focused: str | None) -> Callable[[], tuple[np.ndarray, ...]]:
    """Start embedding the query and, when it differs, its focused text, in one encoder call
    (a second short text in the same batch costs about a millisecond, a second call about
    ten). Calling the result waits for (the query's own vector, the one the semantic
    strategies match)."""
    if focused is None:
        waiting = embed_queries_soon([query])
        return lambda: (waiting()[0],) * 2
    waiting = embed_queries_soon([query, focused])
    return lambda: tuple(waiting())


def _decisions_with_weights(
    analysis: QueryAnalysis, cfg: SearchSettings, namespace_id: int
) -> SearchDecisions:
    """Stage 2's weights: adapted to the analysis, times the intent's profile and the
    namespace's learned multipliers; whether the graph runs, the rules that fired."""
    adapted, graph_enabled, rules = _weights(analysis, cfg)
    weights = adapted
    if cfg.on("intent_profiles"):
        weights = apply_multipliers(weights, intent_profile(analysis.intent))
    learned = learned_weights(namespace_id) if cfg.on("learned_weights") else {}
    return SearchDecisions(
        ranked=[],
        analysis=analysis,
        weights=apply_multipliers(weights, learned),
        adapted=adapted,
        learned=learned,
        rules=rules,
        graph_enabled=graph_enabled,
    )


def _weights(
    analysis: QueryAnalysis, cfg: SearchSettings
) -> tuple[dict[str, float], bool, list[str]]:
    """Stage 2: the adapted weights, whether the graph runs, the rules that fired."""
    if not cfg.on("adaptive_weights"):
        return dict(BASE_WEIGHTS), bool(analysis.entities), []
    weights, enabled, rules = adapt_weights(
        analysis,
        question_semantic=cfg.question_semantic,
        question_keyword=cfg.question_keyword,
        tag_entity_keyword=cfg.tag_entity_keyword,
    )
    return weights, enabled["graph"], rules


def _candidates(
    req: SearchRequest,
    cfg: SearchSettings,
    scope: Scope,
    analysis: QueryAnalysis,
    vectors: Vectors,
    weights: dict[str, float],
    graph_enabled: bool,
    keyword: KeywordHits | None = None,
) -> tuple[Pool, list[Ranked]]:
    """Stages 3-4: one pool per query text; in deep mode, the variants' pools fused.
    `vectors`: what the semantic strategies match (focused) and the query's own; `keyword`:
    the query's keyword hits, found while it was embedded."""
    vector, own = vectors
    gather_for = partial(
        gather,
        analysis=analysis,
        scope=scope,
        weights=weights,
        graph_enabled=graph_enabled,
        config=cfg,
        semantic_only=req.mode == "semantic",
    )
    pool = gather_for(text=req.query, vector=vector, query_vector=own, keyword=keyword)
    items = dict(pool.items)
    if req.mode == "deep" and cfg.on("deep"):
        started = time.perf_counter()
        fused: list[Mapping[str, float]] = [pool.fused]
        for text in query_variants.query_variants(req.query)[1:]:
            focused = _focus_text(text, analysis.tag_entities) if cfg.on("focus") else None
            own_vector, match_vector = _embed_soon(text, focused)()
            extra = gather_for(text=text, vector=match_vector, query_vector=own_vector)
            items.update({k: r for k, r in extra.items.items() if k not in items})
            fused.append(extra.fused)
        if len(fused) > 1:
            scores, found = fuse.fuse_variants(fused)
            items = {
                k: _variant_scored(r, scores.get(k, 0.0), found.get(k, 0)) for k, r in items.items()
            }
        pool.timings["deep"] = elapsed_ms(started)
    return pool, list(items.values())


def _variant_scored(r: Ranked, score: float, found: int) -> Ranked:
    reasons = (*r.reasons, f"variants:{found}") if found > 1 else r.reasons
    return r.copy(score=score, fused=score, reasons=reasons)


def _boosts(
    req: SearchRequest, cfg: SearchSettings, analysis: QueryAnalysis, pool: Pool
) -> list[Stage]:
    """Stages 5-6, then the boosted order (by score, ties by id)."""
    stages: list[Stage] = []
    if cfg.on("questions"):
        stages.append(("questions", boost.question_turns))
    if cfg.on("entity_boost") and analysis.tag_entities:
        entities = (analysis.subject,) if analysis.subject else analysis.tag_entities
        stages.append(("entity_boost", partial(boost.entity_boost, tag_entities=entities)))
    if cfg.on("coactivation"):
        spread = partial(
            coactivate.spread,
            temporal=pool.temporal,
            graph=pool.graph_adjacency,
            top=cfg.coactivation_top,
        )
        stages.append(("coactivation", spread))
    if cfg.on("boosts"):
        quality = partial(boost.apply_boosts, quality_boost=req.quality_boost)
        in_range = partial(boost.time_boost, after=analysis.after, before=analysis.before)
        stages += [("boosts", quality), ("boosts", in_range)]
    if cfg.on("time_answers") and analysis.asks_when:
        dated = partial(boost.time_answers, mention_times=mention_times)
        stages.append(("time_answers", dated))
    if cfg.on("answers") and cfg.on("questions"):
        stages.append(("answers", partial(boost.answer_turns, temporal=pool.temporal)))
    if cfg.on("session") and cfg.session_share > 0:
        stages.append(("session", partial(session.lift, share=cfg.session_share)))
    stages.append(("order", _by_score))
    return stages


def _by_score(items: list[Ranked]) -> list[Ranked]:
    """The boosted order (by score, ties by id). A memory fetched only as a hit's neighbour,
    that nothing lifted above zero, is not a result."""
    reached = coactivate.reached_by_query(items)
    kept = (r for r in items if r.score > 0 or r.id in reached)
    return sorted(kept, key=lambda r: (-r.score, r.id))


def _judge(ordered: list[Ranked], pool: Pool, cfg: SearchSettings) -> confidence.Verdict:
    """Stage 10 over the boosted order (before diversity and MMR)."""
    plan = pool.plan
    return confidence.judge(
        ordered,
        pool.lists,
        fallback=pool.fallback,
        best_similarity=pool.best_similarity,
        query_idf=plan.query_idf if plan else 0.0,
        missing_idf=plan.missing_idf if plan else 0.0,
        rule=cfg.evidence_rule,
        threshold=cfg.confidence_threshold,
    )


def _diversity(
    req: SearchRequest, cfg: SearchSettings, analysis: QueryAnalysis, scope: Scope
) -> list[Stage]:
    """Stages 8-9 over the boosted order; the head carries embeddings for MMR and the
    contradiction check."""
    head = max(req.limit, mmr.MMR_WINDOW) + 10
    stages: list[Stage] = [("embeddings", partial(with_embeddings, count=head, scope=scope))]
    if cfg.on("diversity"):
        cap = cfg.diversity_max_per_file
        stages.append(("diversity", partial(diversify.diversify, max_per_file=cap)))
    if cfg.on("mmr"):
        stages.append(("mmr", partial(mmr.mmr, lam=mmr.mmr_lambda(analysis.intent))))
    return stages


def _exact(scope: Scope, req: SearchRequest) -> list[Ranked]:
    """mode=exact: substring / phrase matches in their own order, scored 1/rank."""
    hits = exact_search(scope, [req.query], req.limit)
    rows = fetch_rows([h.id for h in hits], None)
    return [
        Ranked(
            id=h.id,
            score=1.0 / rank,
            fused=1.0 / rank,
            ranks={"exact": rank},
            raw={"exact": h.score},
            tags=rows[h.id].tags,
            created_at=rows[h.id].created_at,
            file_path=rows[h.id].file_path,
            tier=rows[h.id].tier,
        )
        for rank, h in enumerate(hits, start=1)
    ][: req.limit]


def _debug(
    req: SearchRequest,
    cfg: SearchSettings,
    outcome: SearchDecisions,
    trace: Trace | None,
    timings: dict[str, float],
    latency: float,
    path: list[dict[str, Any]] | None,
) -> dict[str, Any] | None:
    """The explain view (include_debug), or None when not asked for."""
    if not req.include_debug:
        return None
    debug = explain(
        req=req,
        config=cfg,
        analysis=outcome.analysis,
        weights=outcome.weights,
        adapted=outcome.adapted,
        learned=outcome.learned,
        rules=outcome.rules,
        pool=outcome.pool,
        ranked=outcome.ranked,
        trace=trace or Trace(),
        timings=timings,
        model=model_name(),
    )
    debug["latency_ms"] = latency
    chain = outcome.chain
    debug["why_path"] = {
        "direction": chain.direction if chain else (outcome.analysis and outcome.analysis.causal),
        "score": chain.score if chain else None,
        "path": path,
    }
    verdict = outcome.verdict
    if verdict and verdict.signals:
        debug["confidence_signals"] = verdict.signals.as_dict()
    return debug


def _log(
    req: SearchRequest,
    cfg: SearchSettings,
    outcome: SearchDecisions,
    flags: dict[str, Any],
    timings: dict[str, float],
    latency: float,
) -> int | None:
    """Write the query log row; its id, or None when the primary is down behind a replica."""
    ranked = outcome.ranked
    fields = log_fields(req, outcome.analysis, outcome.weights, ranked, flags, timings, latency)
    if outcome.vector is not None and (flags["evidence_gap"] or not ranked):
        fields["missed_vector"] = outcome.vector  # for the missed-searches queue's grouping
    try:
        return querylog.record(fields, sync=cfg.querylog_sync)
    except (OperationalError, InterfaceError):
        # With a read replica, searches answer while the primary is down; the log waits.
        if not replica_configured():
            raise
        logger.warning("search log not written: the primary database is unavailable")
        return None
