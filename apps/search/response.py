"""The search response and its three readings: the JSON payload, the explain view
(include_debug) and the QueryLog row. Shaping only; search() in services.py decides."""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from apps.history.models import MemoryRevision
from apps.memories.models import CausalEdge, Memory, RecheckMark, Relation
from apps.memories.provenance import provenance_dict
from memoryhub.replica.routing import read_connection as connection

from .config import SearchSettings
from .pipeline import budget, confidence, fuse
from .pipeline.candidates import Pool
from .pipeline.reads import semantic
from .pipeline.scope import uuid_array
from .pipeline.why import chain_text
from .types import QueryAnalysis, Ranked

if TYPE_CHECKING:
    from .params import SearchRequest

__all__ = [
    "SearchResponse",
    "Trace",
    "chain_text",
    "contradicting_pairs",
    "explain",
    "payload",
    "payload_rows",
    "render_markdown",
]

# Reasons that also show in a result's `why` next to the per-strategy ranks.
WHY_REASONS = ("coactivation", "entity")
MEMORY = Memory._meta.db_table
EDGE = CausalEdge._meta.db_table
REVISION = MemoryRevision._meta.db_table
RECHECK = RecheckMark._meta.db_table


@dataclass
class SearchResponse:
    memories: list[dict[str, Any]]
    total: int
    query: str
    mode: str
    flags: dict[str, Any]
    debug: dict[str, Any] | None = None
    query_log_id: int | None = None
    # The assistant-facing text's budget as this search decided it (None: unlimited).
    text_budget: int | None = field(default=None, repr=False)
    # 0..1: how likely the results hold the answer (None: no query text, nothing to judge)
    confidence: float | None = None
    signals: dict[str, Any] | None = field(
        default=None, repr=False
    )  # what the confidence was built from
    # The why path's chain (pipeline/why.py): each memory (id, title) with the link from the one
    # before it; empty when the query asked no why or the matches have no causal link.
    path: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out = {
            "memories": self.memories,
            "total": self.total,
            "query": self.query,
            "mode": self.mode,
            "confidence": self.confidence,
            "flags": self.flags,
            "path": self.path,
            "query_log_id": self.query_log_id,
        }
        if self.debug is not None:
            out["debug"] = self.debug
        return out


def render_markdown(response: SearchResponse, token_budget: int | None = None) -> str:
    """Assistant-facing text: evidence-gap warning first when flagged, contradictions marked,
    whole memories only, within `token_budget` if given, else the budget the search decided
    (the request's token_budget or SEARCH_TOKEN_BUDGET; unlimited when the request or the
    settings switch the `budget` stage off)."""
    limit = token_budget if token_budget is not None else response.text_budget
    return budget.render(response.to_dict(), limit)


def payload_rows(
    ranked: Sequence[Ranked],
    *,
    as_of: datetime | None = None,
    relations: Collection[str] | None = None,
) -> dict[str, dict[str, Any]]:
    """The results' stored fields by id (PAYLOAD_COLUMNS), each memory's title and content as
    they were at `as_of` when given. One statement; it also reads the `contradicts` edges
    among the results (contradicting_pairs), which stage 11 flags. `relations`: those the
    namespace's links have, when known (a kept namespace): the statement leaves out the
    successors and older versions without a `supersedes` link, the contradictions without a
    `contradicts` one."""
    if not ranked:
        return {}
    ids = uuid_array(r.id for r in ranked)
    supersedes = relations is None or Relation.SUPERSEDES.value in relations
    contradicts = relations is None or Relation.CONTRADICTS.value in relations
    params: list[Any] = [as_of] * 4 if supersedes else []
    params += [ids, ids] if contradicts else [ids]
    # Plain SQL (runs on every search; the ORM's query building cost more than the query).
    with connection.cursor() as cursor:
        cursor.execute(PAYLOAD_SQL[supersedes, contradicts], params)
        rows = {row[0]: dict(zip(PAYLOAD_COLUMNS, row, strict=True)) for row in cursor}
    if as_of is not None:
        _content_as_of(rows, as_of)
    return rows


def contradicting_pairs(rows: dict[str, dict[str, Any]]) -> list[tuple[str, str]]:
    """The `contradicts` edges among the results (payload_rows), newest first."""
    found = [
        (-created, source, str(target))
        for source, row in rows.items()
        for target, created in _loaded(row["contradicts"]) or ()
    ]
    return [(source, target) for _, source, target in sorted(found, key=lambda x: x[0])]


def payload(
    ranked: Sequence[Ranked],
    rows: dict[str, dict[str, Any]],
    pairs: Sequence[tuple[str, str]],
    *,
    as_of: datetime | None = None,
    now: datetime | None = None,
) -> list[dict[str, Any]]:
    """The results as returned, from their `rows` (payload_rows): stored fields, validity
    (valid_from, valid_until, what superseded it and what it replaced), final score, why
    (ranks and boosts), flags. `as_of`: the content each memory had then (read into the
    rows), and only successors learnt by then."""
    moment = as_of or now
    out = []
    for r in ranked:
        row = rows.get(r.id)
        if row is None:
            continue
        why = dict(r.ranks)
        for reason in r.reasons:
            if reason in WHY_REASONS:
                why.setdefault(reason, 1)
        until = row["valid_until"]
        item = {
            "id": r.id,
            "content": row["content"],
            "title": row["title"],
            "category": row["category"],
            "tags": list(r.tags),
            "file_path": row["file_path"],
            "created_at": row["created_at"].isoformat(),
            "valid_from": row["valid_from"].isoformat(),
            "valid_until": until.isoformat() if until else None,
            "current": until is None or moment is None or until > moment,
            "superseded_by": row["superseded_by"],
            "supersedes": [_replaced(x) for x in _loaded(row["supersedes"]) or ()],
            "basis_changed": _loaded(row["basis_changed"]),
            "provenance": provenance_dict(
                door=row["origin_door"],
                person=row["origin_person"],
                credential=row["origin_credential"],
                client=row["origin_client"],
                extra=_loaded(row["provenance"]),
            ),
            # Only approved memories reach a search; one a person approved after the risk
            # check flagged it is returned with the findings and the reviewer.
            "review": row["review"],
            "reviewed_by": row["reviewed_by"],
            "risk": _loaded(row["risk"]) or [],
            "score": round(float(r.score), 6),
            "why": why,
        }
        contradicted = [
            f"contradiction:{b if a == r.id else a}" for a, b in pairs if r.id in (a, b)
        ]
        if contradicted:
            item["flags"] = contradicted
        out.append(item)
    return out


PAYLOAD_COLUMNS = (
    "id",
    "content",
    "title",
    "category",
    "file_path",
    "created_at",
    "valid_from",
    "valid_until",
    "superseded_by",
    "supersedes",
    "basis_changed",
    "origin_door",
    "origin_person",
    "origin_credential",
    "origin_client",
    "provenance",
    "review",
    "reviewed_by",
    "risk",
    "contradicts",
)
# Successors and predecessors through `supersedes` links (index probes on the edge's two
# unique indexes), each only when learnt by as_of if one is given; the latest re-check mark
# (apps/memories/recheck.py: what the memory rests on changed), by the mark's unique index;
# the `contradicts` edges from each result to another, with their times (stage 11's flags).
_SUCCESSOR = f"""(SELECT e.source_id::text FROM {EDGE} e JOIN {MEMORY} s ON s.id = e.source_id
         WHERE e.target_id = m.id AND e.relation = 'supersedes'
           AND (%s::timestamptz IS NULL OR s.created_at <= %s)
         ORDER BY s.created_at DESC LIMIT 1)"""
_OLDER = f"""(SELECT json_agg(json_build_object(
                   'id', o.id, 'title', o.title, 'content', left(o.content, 300),
                   'valid_from', coalesce(o.valid_from, o.created_at),
                   'valid_until', o.valid_until) ORDER BY o.created_at)
          FROM {EDGE} e JOIN {MEMORY} o ON o.id = e.target_id
         WHERE e.source_id = m.id AND e.relation = 'supersedes'
           AND (%s::timestamptz IS NULL OR o.created_at <= %s))"""
_CONTRADICTED = f"""(SELECT json_agg(json_build_array(e.target_id,
                                              extract(epoch FROM e.created_at)))
          FROM {EDGE} e
         WHERE e.source_id = m.id AND e.relation = 'contradicts'
           AND e.target_id = ANY(%s::uuid[]))"""


def _payload_sql(supersedes: bool, contradicts: bool) -> str:
    """The payload's statement; without the `supersedes` or the `contradicts` subselects (null
    columns, none of their parameters) where the namespace holds no such link."""
    successor, older = (_SUCCESSOR, _OLDER) if supersedes else ("NULL::text", "NULL::json")
    contradicted = _CONTRADICTED if contradicts else "NULL::json"
    return f"""
SELECT m.id::text, m.content, m.title, m.category, m.file_path, m.created_at,
       coalesce(m.valid_from, m.created_at), m.valid_until,
       {successor},
       {older},
       (SELECT json_build_object('basis', r.basis_id, 'basis_title', r.basis_title,
                                 'reason', r.reason, 'on', r.marked_at)
          FROM {RECHECK} r WHERE r.memory_id = m.id ORDER BY r.marked_at DESC LIMIT 1),
       m.origin_door, m.origin_person, m.origin_credential, m.origin_client, m.provenance,
       m.review, m.reviewed_by, m.risk,
       {contradicted}
  FROM {MEMORY} m WHERE m.id = ANY(%s::uuid[])
"""


# By (any `supersedes` link, any `contradicts` link): the four statements.
PAYLOAD_SQL = {(a, b): _payload_sql(a, b) for a in (True, False) for b in (True, False)}


def _loaded(value: Any) -> Any:
    """A JSON column as Python (the driver hands jsonb over as text under Django)."""
    return json.loads(value) if isinstance(value, str) else value


def _replaced(older: dict[str, Any]) -> dict[str, Any]:
    """What a result replaced and when: "was Jenkins until June"."""
    return {
        "id": older["id"],
        "title": older["title"],
        "content": older["content"],
        "valid_from": older["valid_from"],
        "valid_until": older["valid_until"],
    }


def _content_as_of(rows: dict[str, dict[str, Any]], as_of: datetime) -> None:
    """Each memory's title and content as they were at `as_of`: the `before` of the first
    change to each field after then (the revisions keep every change)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT memory_id::text, before FROM {REVISION} "
            "WHERE memory_id = ANY(%s::uuid[]) AND created_at > %s "
            "AND (before ? 'content' OR before ? 'title') ORDER BY created_at",
            [uuid_array(rows), as_of],
        )
        seen: set[tuple[str, str]] = set()
        for memory_id, raw in cursor.fetchall():
            before = _loaded(raw)
            for name in ("content", "title"):
                if name in before and (memory_id, name) not in seen:
                    seen.add((memory_id, name))
                    rows[memory_id][name] = before[name]


# The steps whose order the explain view shows per result.
POSITION_STEPS = ("fused", "order", "diversity", "mmr", "why")


@dataclass
class Trace:
    """The order each step left (recorded only for include_debug), so the explain view can
    show where a result stood after fusion, after the boosts, diversity and MMR."""

    orders: dict[str, list[str]] = field(default_factory=dict)

    def record(self, step: str, items: Sequence[Ranked]) -> None:
        self.orders.pop(step, None)  # a repeated step counts at its last position
        self.orders[step] = [r.id for r in items]

    def positions(self, key: str) -> dict[str, int | None]:
        return {
            step: (order.index(key) + 1 if key in order else None)
            for step, order in self.orders.items()
            if step in POSITION_STEPS
        }

    def moves(self, step: str, limit: int) -> list[dict[str, Any]]:
        """Results that `step` moved or dropped, among the top `limit` before or after it."""
        steps = list(self.orders)
        if step not in steps or steps.index(step) == 0:
            return []
        before, after = self.orders[steps[steps.index(step) - 1]], self.orders[step]
        out = []
        for key in dict.fromkeys(before[:limit] + after[:limit]):
            was = before.index(key) + 1 if key in before else None
            now = after.index(key) + 1 if key in after else None
            if was != now:
                out.append({"id": key, "from": was, "to": now})
        return out


def explain(
    *,
    req: SearchRequest,
    config: SearchSettings,
    analysis: QueryAnalysis | None,
    weights: dict[str, float],
    adapted: dict[str, float],
    learned: dict[str, float],
    rules: list[str],
    pool: Pool | None,
    ranked: Sequence[Ranked],
    trace: Trace,
    timings: dict[str, float],
    model: str,
) -> dict[str, Any]:
    """The include_debug payload (the UI's explain view reads it)."""
    time_range = None
    if analysis and (analysis.after or analysis.before):
        time_range = [str(analysis.after), str(analysis.before)]
    debug: dict[str, Any] = {
        "intent": analysis.intent if analysis else None,
        "intent_scores": analysis.intent_scores if analysis else {},
        "entities": list(analysis.entities) if analysis else [],
        "time_phrase": analysis.time_phrase if analysis else "",
        "query_time_range": time_range,
        "filters": {
            "after": str(req.after) if req.after else None,
            "before": str(req.before) if req.before else None,
            "tags": list(req.tags),
            "categories": list(req.categories),
            "file_path": req.file_path,
            "time_expr": req.time_phrase,
        },
        "weights": _rounded(weights),
        "adapted_weights": _rounded(adapted),
        "learned_weights": learned,
        "weight_rules": rules,
        "thresholds": {
            "semantic_min": semantic.SEMANTIC_MIN,
            "semantic_fallback": semantic.SEMANTIC_FALLBACK_MIN,
            "gap_z": confidence.GAP_Z,
            "rrf_k": fuse.RRF_K,
            "diversity_max_per_file": config.diversity_max_per_file,
        },
        "fallback_retry": bool(pool.fallback) if pool else False,
        "fusion": config.fusion_used,
        "disabled_stages": sorted(config.disabled),
        "stage_timings_ms": timings,
        "embedding_model": model,
        "results": [_result(r, trace) for r in ranked],
        "moves": {
            "diversity": trace.moves("diversity", req.limit),
            "mmr": trace.moves("mmr", req.limit),
        },
    }
    if pool:
        debug["candidates"] = {
            s: [
                {"id": k, "rank": r, "score": round(v, 4)}
                for r, (k, v) in enumerate(hits[:20], start=1)
            ]
            for s, hits in pool.lists.items()
        }
        debug["pool_size"] = len(pool.items)
        debug["top_z"] = confidence.top_z_score([r.score for r in ranked[:20]])
    return debug


def _rounded(weights: dict[str, float]) -> dict[str, float]:
    return {k: round(v, 4) for k, v in weights.items()}


def _result(r: Ranked, trace: Trace) -> dict[str, Any]:
    return {
        "id": r.id,
        "score": round(float(r.score), 6),
        "fused": round(float(r.fused), 6),
        "ranks": dict(r.ranks),
        "scores": {k: round(float(v), 4) for k, v in _scores(r).items()},
        "boosts": [[name, round(float(v), 4)] for name, v in r.boosts],
        "reasons": list(r.reasons),
        "positions": trace.positions(r.id),
    }


def _scores(r: Ranked) -> dict[str, float]:
    """The candidate's evidence (named with a leading underscore) and each strategy's raw
    score."""
    return {**r.evidence.as_scores(), **r.raw} if r.evidence else dict(r.raw)


def log_fields(
    req: SearchRequest,
    analysis: QueryAnalysis | None,
    weights: dict[str, float],
    ranked: Sequence[Ranked],
    flags: dict[str, Any],
    timings: dict[str, float],
    latency: float,
) -> dict[str, Any]:
    return {
        "namespace_id": req.namespace.id,
        "query": req.query,
        "mode": req.mode,
        "intent": analysis.intent if analysis else "",
        "entities": list(analysis.entities) if analysis else [],
        "filters": {
            "tags": list(req.tags),
            "categories": list(req.categories),
            "file_path": req.file_path,
            "after": req.after.isoformat() if req.after else None,
            "before": req.before.isoformat() if req.before else None,
        },
        "strategy_weights": _rounded(weights),
        "results": [
            {"id": r.id, "score": round(float(r.score), 6), "ranks": dict(r.ranks)} for r in ranked
        ],
        "stage_timings_ms": timings,
        "latency_ms": max(latency, 0.0),
        "evidence_gap": flags["evidence_gap"],
        "fallback_retry": flags["fallback_retry"],
        "contradictions": flags["contradictions"],
    }
