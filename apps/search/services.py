"""search(): the one entry point MCP, REST, the UI and the benchmarks call (SPEC section 4)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime

from django.db import connection

from apps.memories.embeddings import embed_query, model_name
from apps.memories.models import Memory

from . import querylog
from .engine import Scored, score_query
from .models import StrategyWeights
from .params import SearchRequest, validate
from .pipeline import budget, confidence, contradictions, fuse, rerank, retrieve, variants
from .pipeline import coactivate as co
from .pipeline import session as sessions
from .pipeline.analyse import analyse_query
from .pipeline.retrieve import SEMANTIC_MIN
from .pipeline.scope import MEMORY, MEMORY_TAGS, TAG, Scope
from .pipeline.weights import BASE_WEIGHTS, adapt_weights, apply_multipliers, intent_profile
from .stages import disabled_set
from .types import Candidate

TIME_MATCH_BOOST = 0.5  # memories inside a time range the query itself mentions
KNOWN_TAGS_TTL_S = 60.0
_known_tags: dict[int, tuple[float, tuple[str, ...]]] = {}


@dataclass
class SearchResponse:
    memories: list[dict]
    total: int
    query: str
    mode: str
    flags: dict
    debug: dict | None = None
    query_log_id: int | None = None
    token_budget: int | None = field(default=None, repr=False)
    # 0..1: how likely the results hold the answer (None: no query text, nothing to judge)
    confidence: float | None = None
    signals: dict | None = field(default=None, repr=False)  # what the confidence was built from

    def to_dict(self) -> dict:
        out = {
            "memories": self.memories,
            "total": self.total,
            "query": self.query,
            "mode": self.mode,
            "confidence": self.confidence,
            "flags": self.flags,
            "query_log_id": self.query_log_id,
        }
        if self.debug is not None:
            out["debug"] = self.debug
        return out


def render_markdown(response: SearchResponse, token_budget: int | None = None) -> str:
    """Assistant-facing text: evidence-gap warning first when flagged, contradictions marked,
    whole memories only, within the token budget (default: settings.SEARCH_TOKEN_BUDGET;
    unlimited when the `budget` stage is off)."""
    from django.conf import settings

    limit = token_budget or response.token_budget or getattr(settings, "SEARCH_TOKEN_BUDGET", 2000)
    if "budget" in disabled_set() and token_budget is None:
        limit = None
    return budget.render(response.to_dict(), limit)


def search(
    *, namespace, query: str = "", mode: str = "hybrid", time_expr: str | None = None,
    after: datetime | str | None = None, before: datetime | str | None = None,
    tags=None, categories=None, file_path: str | None = None, quality_boost: float = 0.0,
    limit: int = 10, include_debug: bool = False, as_of: datetime | str | None = None,
    disabled_stages=(), token_budget: int | None = None, log: bool = True,
) -> SearchResponse:  # fmt: skip
    started = time.perf_counter()
    req = validate(
        namespace=namespace, query=query, mode=mode, time_expr=time_expr, after=after,
        before=before, tags=tags, categories=categories, file_path=file_path,
        quality_boost=quality_boost, limit=limit, include_debug=include_debug, as_of=as_of,
        disabled_stages=disabled_stages, token_budget=token_budget,
    )  # fmt: skip
    off = disabled_set(req.disabled)

    def on(stage: str) -> bool:
        return stage not in off

    scope = Scope(
        namespace_id=req.namespace.id, tags=req.tags, categories=req.categories,
        file_path=req.file_path, after=req.after, before=req.before,
    )  # fmt: skip
    timings: dict[str, float] = {}
    if not req.query:
        # filters only: newest first, nothing to rank or judge
        ranked, scored, analysis = _browse(req, scope), None, None
        verdict = None
        weights, learned, rules = {}, {}, []
    else:
        t = time.perf_counter()
        vector = embed_query(req.query) if req.mode != "exact" else None
        timings["embed"] = _ms(t)
        t = time.perf_counter()
        analysis = analyse_query(
            req.query, vector=vector, model_name=model_name(), now=req.now,
            known_tags=_namespace_tags(req.namespace.id) if on("analyse") else (),
            enabled=on("analyse"),
        )  # fmt: skip
        weights, enabled, rules = adapt_weights(analysis)
        if not on("adaptive_weights"):
            weights, rules = dict(BASE_WEIGHTS), []
            enabled = {"keyword": True, "semantic": True, "graph": bool(analysis.entities),
                       "exact": True}  # fmt: skip
        if on("intent_profiles"):
            weights = apply_multipliers(weights, intent_profile(analysis.intent))
        learned = _learned_weights(req.namespace.id) if on("learned_weights") else {}
        weights = apply_multipliers(weights, learned)
        timings["analyse"] = _ms(t)
        ranked, scored, verdict = _rank(req, scope, analysis, vector, weights, enabled, on,
                                        timings)  # fmt: skip
    t = time.perf_counter()
    pairs = _contradictions(req, ranked) if on("contradictions") and ranked else []
    timings["contradictions"] = _ms(t)
    memories = _payload(ranked)
    flags = {
        "evidence_gap": bool(verdict and verdict.evidence_gap),
        "fallback_retry": bool(scored.fallback) if scored else False,
        "contradictions": [list(p) for p in pairs],
    }
    for item in memories:
        item_flags = [f"contradiction:{b if a == item['id'] else a}" for a, b in pairs
                      if item["id"] in (a, b)]  # fmt: skip
        if item_flags:
            item["flags"] = item_flags
    latency = _ms(started)
    debug = None
    if req.include_debug:
        debug = _debug(req, analysis, weights, learned, rules, scored, ranked, timings, off)
        debug["latency_ms"] = latency
        if verdict and verdict.signals:
            debug["confidence_signals"] = verdict.signals.as_dict()
    log_id = None
    if log:
        log_id = querylog.reserve_id()
        querylog.submit(
            _log_fields(log_id, req, analysis, weights, ranked, flags, timings, latency)
        )
    return SearchResponse(
        memories=memories, total=len(memories), query=req.query, mode=req.mode, flags=flags,
        debug=debug, query_log_id=log_id, token_budget=req.token_budget,
        confidence=round(verdict.confidence, 4) if verdict else None,
        signals=verdict.signals.as_dict() if verdict and verdict.signals else None,
    )  # fmt: skip


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 2)


def _rank(req: SearchRequest, scope, analysis, vector, weights, enabled, on, timings):
    """Scores, re-ranks and cuts the candidates; returns (ranked, scored, verdict), the
    verdict None when the confidence stage is off."""
    if req.mode == "exact":
        from .pipeline.retrieve import exact_search, fetch_rows

        hits = exact_search(scope, [req.query], req.limit)
        rows = fetch_rows([h.id for h in hits], None)
        ranked = []
        for rank, h in enumerate(hits, start=1):
            row = rows[h.id]
            ranked.append(Candidate(id=h.id, score=1.0 / rank, ranks={"exact": rank},
                                    raw={"exact": h.score}, tags=row["tags"],
                                    created_at=row["created_at"], file_path=row["file_path"],
                                    tier=row["tier"]))  # fmt: skip
        found = 1.0 if ranked else 0.0
        return ranked[: req.limit], None, confidence.Verdict(found, not ranked)
    common = dict(analysis=analysis, scope=scope, weights=weights, enabled=enabled, on=on,
                  semantic_only=req.mode == "semantic")  # fmt: skip
    scored = score_query(text=req.query, vector=vector, **common)
    timings.update(scored.timings)
    fused = scored.fused
    if req.mode == "deep" and on("deep"):
        t = time.perf_counter()
        lists = [fused]
        for text in variants.query_variants(req.query)[1:]:
            extra = score_query(text=text, vector=embed_query(text), **common)
            scored.candidates.update({k: v for k, v in extra.candidates.items()
                                      if k not in scored.candidates})  # fmt: skip
            lists.append(extra.fused)
        if len(lists) > 1:
            fused, found = fuse.fuse_variants(lists)
            for key, count in found.items():
                if count > 1:
                    scored.candidates[key].reasons.append(f"variants:{count}")
        timings["deep"] = _ms(t)
    t = time.perf_counter()
    cands = scored.candidates
    for key, c in cands.items():
        c.score = fused.get(key, 0.0)
    if on("entity_boost") and analysis.tag_entities:
        rerank.entity_boost(list(cands.values()), analysis.tag_entities)
    if on("coactivation"):
        scores, received = co.coactivate(
            {k: c.score for k, c in cands.items()}, scored.temporal, scored.graph_adjacency,
            top=_coactivation_top(), eligible=_own_evidence(cands),
        )  # fmt: skip
        for key in received:
            if key in cands:
                cands[key].score = scores[key]
                cands[key].reasons.append("coactivation")
    share = _session_share()
    if on("session") and share > 0:
        lifted = sessions.session_lift(
            {k: c.score for k, c in cands.items()}, {k: c.created_at for k, c in cands.items()},
            share=share, eligible=_own_evidence(cands),
        )  # fmt: skip
        for key, value in lifted.items():
            cands[key].score = value
    if on("boosts"):
        rerank.apply_boosts(list(cands.values()), req.quality_boost)
        if analysis.after or analysis.before:
            for c in cands.values():
                inside = (analysis.after is None or c.created_at >= analysis.after) and (
                    analysis.before is None or c.created_at < analysis.before)  # fmt: skip
                if inside:
                    c.score *= 1.0 + TIME_MATCH_BOOST
    # a memory fetched only as a neighbour, that neither the query nor its neighbours lifted,
    # is not a result
    evidence = _own_evidence(cands)
    ordered = sorted((c for c in cands.values() if c.score > 0 or c.id in evidence),
                     key=lambda c: (-c.score, c.id))  # fmt: skip
    timings["rerank"] = _ms(t)
    verdict = _judge(ordered, scored) if on("confidence") else None
    t = time.perf_counter()
    head = ordered[: max(req.limit, rerank.MMR_WINDOW) + 10]
    vectors = retrieve.fetch_embeddings([c.id for c in head])
    for c in head:
        c.embedding = vectors.get(c.id)
    if on("diversity"):
        from django.conf import settings

        ordered = rerank.diversify(ordered, getattr(settings, "SEARCH_DIVERSITY_MAX_PER_FILE", 3))
    if on("mmr"):
        ordered = rerank.mmr(ordered, rerank.mmr_lambda(analysis.intent))
    timings["diversify"] = _ms(t)
    return ordered[: req.limit], scored, verdict


def _session_share() -> float:
    from django.conf import settings

    return float(settings.SEARCH_SESSION_SHARE)


def _own_evidence(cands: dict[str, Candidate]) -> set[str]:
    """Memories the query itself reaches: a lexical match or a cosine at the semantic floor."""
    return {
        k
        for k, c in cands.items()
        if c.raw.get("_lexical", 0.0) > 0 or c.raw.get("_similarity", 0.0) >= SEMANTIC_MIN
    }


def _coactivation_top() -> int:
    from django.conf import settings

    return int(getattr(settings, "SEARCH_COACTIVATION_TOP", co.COACTIVATION_TOP))


def _judge(ordered: list[Candidate], scored: Scored) -> confidence.Verdict:
    from django.conf import settings

    plan = scored.plan
    return confidence.judge(
        ordered, scored.lists, fallback=scored.fallback, best_similarity=scored.best_similarity,
        query_idf=plan.query_idf if plan else 0.0, missing_idf=plan.missing_idf if plan else 0.0,
        rule=settings.SEARCH_EVIDENCE_RULE, threshold=settings.SEARCH_CONFIDENCE_THRESHOLD,
    )  # fmt: skip


def _browse(req: SearchRequest, scope: Scope) -> list[Candidate]:
    """No query text: the newest memories matching the filters."""
    where, params = scope.where()
    sql = (
        f"SELECT m.id, m.created_at, m.file_path, m.tier, "
        f"ARRAY(SELECT t.name FROM {MEMORY_TAGS} mt JOIN {TAG} t ON t.id = mt.tag_id "
        f"WHERE mt.memory_id = m.id) FROM {MEMORY} m WHERE {where} "
        "ORDER BY m.created_at DESC LIMIT %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params + [req.limit])
        rows = cursor.fetchall()
    return [Candidate(id=str(i), score=1.0, created_at=c, file_path=f, tier=t, tags=tuple(tg))
            for i, c, f, t, tg in rows]  # fmt: skip


def _namespace_tags(namespace_id: int) -> tuple[str, ...]:
    cached = _known_tags.get(namespace_id)
    if cached and time.monotonic() - cached[0] < KNOWN_TAGS_TTL_S:
        return cached[1]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT DISTINCT t.name FROM {TAG} t JOIN {MEMORY_TAGS} mt ON mt.tag_id = t.id "
            f"JOIN {MEMORY} m ON m.id = mt.memory_id WHERE m.namespace_id = %s",
            [namespace_id],
        )
        names = tuple(sorted(r[0] for r in cursor.fetchall()))
    _known_tags[namespace_id] = (time.monotonic(), names)
    return names


def _learned_weights(namespace_id: int) -> dict[str, float]:
    rows = StrategyWeights.objects.filter(namespace_id=namespace_id)
    return {r.strategy: float(r.weight) for r in rows}


def _contradictions(req: SearchRequest, ranked: list[Candidate]) -> list[tuple[str, str]]:
    ids = [c.id for c in ranked]
    pairs = contradictions.edge_pairs(req.namespace.id, ids)
    if any(c.tier == "constitutional" for c in ranked):
        texts = dict(Memory.objects.filter(id__in=ids).values_list("id", "content"))
        items = [(c.id, c.tier, texts.get(_uuid(c.id), ""), c.embedding) for c in ranked]
        pairs += [p for p in contradictions.tier_pairs(items) if p not in pairs]
    return pairs


def _uuid(key: str):
    import uuid

    return uuid.UUID(key)


def _payload(ranked: list[Candidate]) -> list[dict]:
    if not ranked:
        return []
    rows = {
        str(m["id"]): m
        for m in Memory.objects.filter(id__in=[c.id for c in ranked]).values(
            "id", "content", "title", "category", "file_path", "created_at"
        )
    }
    out = []
    for c in ranked:
        row = rows.get(c.id)
        if row is None:
            continue
        why = dict(c.ranks)
        for reason in c.reasons:
            if reason in ("coactivation", "entity"):
                why.setdefault(reason, 1)
        out.append({
            "id": c.id, "content": row["content"], "title": row["title"],
            "category": row["category"], "tags": list(c.tags), "file_path": row["file_path"],
            "created_at": row["created_at"].isoformat(), "score": round(float(c.score), 6),
            "why": why,
        })  # fmt: skip
    return out


def _debug(req, analysis, weights, learned, rules, scored, ranked, timings, off) -> dict:
    debug = {
        "intent": analysis.intent if analysis else None,
        "intent_scores": analysis.intent_scores if analysis else {},
        "entities": list(analysis.entities) if analysis else [],
        "time_phrase": analysis.time_phrase if analysis else "",
        "query_time_range": [str(analysis.after), str(analysis.before)]
        if analysis and (analysis.after or analysis.before) else None,
        "filters": {"after": str(req.after) if req.after else None,
                    "before": str(req.before) if req.before else None,
                    "tags": list(req.tags), "categories": list(req.categories),
                    "file_path": req.file_path, "time_expr": req.time_phrase},
        "weights": {k: round(v, 4) for k, v in weights.items()},
        "learned_weights": learned,
        "weight_rules": rules,
        "thresholds": {"semantic_min": SEMANTIC_MIN, "semantic_fallback": 0.17,
                       "gap_z": confidence.GAP_Z, "rrf_k": fuse.RRF_K},
        "fallback_retry": bool(scored.fallback) if scored else False,
        "fusion": "score" if "score_fusion" not in off else "rrf",
        "disabled_stages": sorted(off),
        "stage_timings_ms": timings,
        "embedding_model": model_name(),
    }  # fmt: skip
    if scored:
        debug["candidates"] = {s: [{"id": k, "rank": r, "score": round(v, 4)}
                                   for r, (k, v) in enumerate(hits[:20], start=1)]
                               for s, hits in scored.lists.items()}  # fmt: skip
        debug["pool_size"] = len(scored.candidates)
        debug["top_z"] = confidence.top_z_score([c.score for c in ranked[:20]])
    return debug


def _log_fields(log_id, req, analysis, weights, ranked, flags, timings, latency) -> dict:
    return {
        "id": log_id, "namespace_id": req.namespace.id, "query": req.query, "mode": req.mode,
        "intent": analysis.intent if analysis else "",
        "entities": list(analysis.entities) if analysis else [],
        "filters": {"tags": list(req.tags), "categories": list(req.categories),
                    "file_path": req.file_path,
                    "after": req.after.isoformat() if req.after else None,
                    "before": req.before.isoformat() if req.before else None},
        "strategy_weights": {k: round(v, 4) for k, v in weights.items()},
        "results": [{"id": c.id, "score": round(float(c.score), 6), "ranks": dict(c.ranks)}
                    for c in ranked],
        "stage_timings_ms": timings, "latency_ms": max(latency, 0.0),
        "evidence_gap": flags["evidence_gap"], "fallback_retry": flags["fallback_retry"],
    }  # fmt: skip
