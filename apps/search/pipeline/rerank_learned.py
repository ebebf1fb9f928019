"""The learned re-ranker: the boosted order's head re-ordered by a linear model over the
signals the earlier stages already computed (each strategy's rank and score, the boosts, the
session and the neighbours), so no new retrieval and no model call on the read path.

The coefficients are fitted offline (`manage.py fit_ranker`, lab/rankfit.py) and kept
in `ranker.json` beside this module; without that file the stage changes nothing. The head's
scores are handed back in the new order (the best score to the new first), so the stages after
it (diversity, MMR) see the same spread of scores as before.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from apps.search.types import QueryAnalysis, Ranked

from . import feedback

HEAD = 20  # candidates re-ordered (and described to the model); the rest keep their place
WEIGHTS_FILE = Path(__file__).with_name("ranker.json")
_MISSING_RANK = math.log1p(101)  # a strategy that did not retrieve the memory (pool is 100)

FEATURES: tuple[str, ...] = (
    "position",  # log(1 + place in the boosted order)
    "score",  # boosted score / the head's best
    "fused",  # fused score / the head's best fused
    "fused_position",  # log(1 + place by fused score)
    "similarity",  # best cosine of the memory or its passages
    "similarity_gap",  # that cosine minus the head's best
    "query_similarity",  # the whole memory's cosine to the query's own vector
    "lexical",  # lexical score / the head's best
    "lexical_hit",  # any lexical match
    "keyword_rank",  # log(1 + rank) in the keyword list, or past its end
    "semantic_rank",
    "feedback_rank",
    "feedback",  # cosine to the feedback vector
    "exact",  # found by phrase match
    "graph",  # reached over causal edges
    "entity",  # entity boost factor - 1
    "asks",  # the memory is a question
    "time_answer",  # the memory mentions a time (factor - 1)
    "time_match",  # inside the range the query names
    "answer",  # gain as the answer after a matching question / best score
    "coactivation",  # what neighbours spread to it / best score
    "session",  # session lift / best score
    "session_size",  # log(1 + head members sharing its session)
    "session_best",  # log(1 + place of its session's best member)
    "session_rank",  # log(1 + members of its session placed above it)
    "neighbour",  # best score of its temporal neighbours / best score
    "when_x_time_answer",  # a "when" question and a memory that names a time
    "when_x_lexical",
    "entities_x_session",  # several names in the query, and the session's size
    "entities_x_session_rank",
)


@dataclass(frozen=True)
class Model:
    coef: np.ndarray  # over the standardised features
    mean: np.ndarray
    scale: np.ndarray
    head: int = HEAD

    def score(self, x: np.ndarray) -> np.ndarray:
        scored: np.ndarray = ((x - self.mean) / self.scale) @ self.coef
        return scored

    def as_dict(self) -> dict[str, Any]:
        return {
            "features": list(FEATURES),
            "coef": self.coef.tolist(),
            "mean": self.mean.tolist(),
            "scale": self.scale.tolist(),
            "head": self.head,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Model:
        if list(data["features"]) != list(FEATURES):
            raise ValueError("ranker weights were fitted on other features; refit them")
        return cls(
            coef=np.asarray(data["coef"], dtype=np.float64),
            mean=np.asarray(data["mean"], dtype=np.float64),
            scale=np.asarray(data["scale"], dtype=np.float64),
            head=int(data.get("head", HEAD)),
        )


@lru_cache(maxsize=4)
def load(path: Path = WEIGHTS_FILE) -> Model | None:
    if not path.exists():
        return None
    return Model.from_dict(json.loads(path.read_text()))


# Set by the fitting tool to collect each search's head and features; None on the read path.
capture: ContextVar[list[Any] | None] = ContextVar("ranker_capture", default=None)
# Lets the fitting tool compare models without writing the weights file.
override: ContextVar[Model | None] = ContextVar("ranker_override", default=None)


def rerank(
    items: Sequence[Ranked],
    *,
    analysis: QueryAnalysis,
    temporal: Mapping[str, Sequence[str]],
    model: Model | None = None,
) -> list[Ranked]:
    model = model or override.get() or load()
    head_size = model.head if model else HEAD
    head, tail = list(items[:head_size]), list(items[head_size:])
    if len(head) < 2:
        return list(items)
    collected = capture.get()
    if model is None and collected is None:
        return list(items)
    x = features(head, analysis, temporal)
    if collected is not None:
        collected.append({"ids": [r.id for r in head], "x": x})
    if model is None:
        return list(items)
    values = model.score(x)
    order = sorted(range(len(head)), key=lambda i: (-values[i], i))
    scores = sorted((r.score for r in head), reverse=True)
    reordered = [
        head[i].copy(score=s, reasons=(*head[i].reasons, "learned_rank"))
        if head[i].score != s
        else head[i]
        for i, s in zip(order, scores, strict=True)
    ]
    return reordered + tail


def features(
    head: Sequence[Ranked], analysis: QueryAnalysis, temporal: Mapping[str, Sequence[str]]
) -> np.ndarray:
    """One row per head item, columns in FEATURES order."""
    best = max(r.score for r in head) or 1.0
    best_fused = max(r.fused for r in head) or 1.0
    best_similarity = max(r.measured.similarity for r in head)
    best_lexical = max(r.measured.lexical for r in head) or 1.0
    fused_place = {r.id: i for i, r in enumerate(sorted(head, key=lambda r: (-r.fused, r.id)))}
    sessions: dict[object, list[int]] = defaultdict(list)
    for i, r in enumerate(head):
        sessions[r.created_at].append(i)
    score_of = {r.id: r.score for r in head}
    several_names = 1.0 if len(analysis.entities) > 1 else 0.0
    when = 1.0 if analysis.asks_when else 0.0
    rows = []
    for i, r in enumerate(head):
        evidence, ranks = r.measured, r.ranks
        boosts = _boosts(r)
        members = sessions[r.created_at]
        time_answer = boosts.get("time_answer", 1.0) - 1.0
        lexical = evidence.lexical / best_lexical
        session_size = math.log1p(len(members))
        neighbours = [score_of.get(n, 0.0) for n in temporal.get(r.id, ())]
        rows.append(
            (
                math.log1p(i),
                r.score / best,
                r.fused / best_fused,
                math.log1p(fused_place[r.id]),
                evidence.similarity,
                evidence.similarity - best_similarity,
                evidence.own_similarity,
                lexical,
                1.0 if evidence.lexical > 0 else 0.0,
                _rank(ranks, "keyword"),
                _rank(ranks, "semantic"),
                _rank(ranks, feedback.STRATEGY),
                evidence.feedback or 0.0,
                1.0 if "exact" in ranks else 0.0,
                1.0 if "graph" in ranks else 0.0,
                boosts.get("entity", 1.0) - 1.0,
                1.0 if r.asks else 0.0,
                time_answer,
                1.0 if "time_match" in boosts else 0.0,
                boosts.get("answer", 0.0) / best,
                boosts.get("coactivation", 0.0) / best,
                boosts.get("session", 0.0) / best,
                session_size,
                math.log1p(members[0]),
                math.log1p(members.index(i)),
                max(neighbours, default=0.0) / best,
                when * time_answer,
                when * lexical,
                several_names * session_size,
                several_names * math.log1p(members.index(i)),
            )
        )
    return np.asarray(rows, dtype=np.float64)


def _rank(ranks: Mapping[str, int], strategy: str) -> float:
    rank = ranks.get(strategy)
    return math.log1p(rank) if rank else _MISSING_RANK


def _boosts(r: Ranked) -> dict[str, float]:
    """Each boost's effect: factors multiply, added amounts add."""
    out: dict[str, float] = {}
    for name, amount in r.boosts:
        if name in ("answer", "coactivation", "session"):
            out[name] = out.get(name, 0.0) + amount
        else:
            out[name] = out.get(name, 1.0) * amount
    return out
