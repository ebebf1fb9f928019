"""Stage 10: is the best result clearly better than the rest, or is this an evidence gap?"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from apps.search.types import Ranked

from .reads.semantic import SEMANTIC_MIN

GAP_Z = 1.5
MIN_SCORES = 3


def top_z_score(scores: Sequence[float]) -> float | None:
    """(top - mean) / stdev of the fused scores; None when it cannot be computed."""
    if len(scores) < 2:
        return None
    stdev = statistics.pstdev(scores)
    if stdev <= 1e-12:
        return 0.0
    return (max(scores) - statistics.fmean(scores)) / stdev


def evidence_gap(scores: Sequence[float], threshold: float = GAP_Z) -> bool:
    """True when nothing stands out (z < threshold) or there is nothing at all. With fewer
    than three scores a z-score says nothing (two values always give z = 1), so only the
    absolute checks in search() judge those."""
    if not scores:
        return True
    if len(scores) < MIN_SCORES:
        return False
    z = top_z_score(scores)
    return z is not None and z < threshold


def weak_evidence(
    ordered: Sequence[Ranked],
    lists: Mapping[str, Sequence[Any]],
    *,
    fallback: bool,
    best_similarity: float,
) -> bool:
    """The evidence-gap rule: nothing found; or no keyword or exact hit and no memory reaching
    the semantic similarity floor; or a top score that does not stand out (z < 1.5) among
    the top 20 (`ordered` is the boosted order, before diversity and MMR)."""
    if not ordered:
        return True
    strong_text = bool(lists.get("keyword")) or bool(lists.get("exact"))
    if not strong_text and (fallback or best_similarity < SEMANTIC_MIN):
        return True
    return evidence_gap([r.score for r in ordered[:20]])


# --- the calibrated estimate -------------------------------------------------------------------
#
# A logistic model over signals the pipeline already has. The coefficients below were fitted on
# locomo-dev with the two halves held apart (conversations 0-2 fit / 3-4 checked, and the other
# way round; `manage.py evaluate --calibrate`), then refitted on both halves together: the
# table is that joint fit, rounded. Answerable = a query searched in its own conversation with
# its evidence in the top 10; unanswerable = the same query searched in another conversation.
# docs/benchmarks.md records both cross-checks.

FEATURES: tuple[str, ...] = (
    "top_cosine",  # cosine of the best result to the query
    "coverage",  # share of the query's idf mass the best lexical match carries (0..1)
    "missing",  # share of the query's idf mass whose terms no memory of the namespace has
    "agreement",  # best result found high by both lexical and semantic retrieval (0..1)
    "z",  # (top - mean) / stdev of the top 20 fused scores, clipped to 0..6, / 6
    "margin",  # (first - second) / first of the fused scores
)
INTERCEPT = -9.31
COEFFICIENTS: dict[str, float] = {
    "top_cosine": 17.12,
    "coverage": 7.135,
    "missing": -2.95,
    # negative once cosine and coverage are in the model (they carry what agreement would);
    # the sign came out the same in both halves' separate fits
    "agreement": -3.901,
    "z": 4.954,
    "margin": 5.318,
}
THRESHOLD = 0.5  # confidence below this sets flags.evidence_gap (rule "calibrated")
RULES = ("calibrated", "zscore")


@dataclass(frozen=True)
class Signals:
    top_cosine: float = 0.0
    coverage: float = 0.0
    missing: float = 0.0
    agreement: float = 0.0
    z: float = 0.0
    margin: float = 0.0

    def as_dict(self) -> dict[str, float]:
        return {name: round(getattr(self, name), 4) for name in FEATURES}


def measure(
    ordered: Sequence[Ranked],
    lists: Mapping[str, Sequence[tuple[str, float]]],
    *,
    query_idf: float,
    missing_idf: float,
) -> Signals:
    """The signals of one search. `ordered` is the boosted order (before diversity and MMR),
    `lists` the per-strategy retrieval lists, `query_idf` the summed idf of every query term
    (terms no memory has included, at the largest idf) and `missing_idf` that of the terms
    no memory has."""
    if not ordered:
        return Signals(missing=1.0 if query_idf > 0 else 0.0)
    top = ordered[0]
    best_lexical = max((c.measured.lexical for c in ordered[:3]), default=0.0)
    coverage = min(best_lexical / query_idf, 1.0) if query_idf > 0 else 0.0
    ranks = []
    for strategy in ("keyword", "semantic"):
        rank = next((r for r, (k, _) in enumerate(lists.get(strategy, ()), 1) if k == top.id), 0)
        ranks.append(1.0 / rank if rank else 0.0)
    scores = [c.score for c in ordered[:20]]
    z = top_z_score(scores) or 0.0
    second = scores[1] if len(scores) > 1 else 0.0
    margin = (scores[0] - second) / scores[0] if scores[0] > 0 else 0.0
    return Signals(
        top_cosine=max(top.measured.own_similarity, 0.0),
        coverage=coverage,
        missing=min(missing_idf / query_idf, 1.0) if query_idf > 0 else 0.0,
        agreement=sum(ranks) / len(ranks),
        z=min(max(z, 0.0), 6.0) / 6.0,
        margin=min(max(margin, 0.0), 1.0),
    )


def estimate(
    signals: Signals,
    coefficients: Mapping[str, float] | None = None,
    intercept: float | None = None,
) -> float:
    """Probability (0..1) that the results hold the answer."""
    coefficients = COEFFICIENTS if coefficients is None else coefficients
    value = INTERCEPT if intercept is None else intercept
    value += sum(coefficients.get(name, 0.0) * getattr(signals, name) for name in FEATURES)
    return 1.0 / (1.0 + math.exp(-max(min(value, 50.0), -50.0)))


@dataclass(frozen=True)
class Verdict:
    confidence: float
    evidence_gap: bool
    signals: Signals | None = None


def judge(
    ordered: Sequence[Ranked],
    lists: Mapping[str, Sequence[tuple[str, float]]],
    *,
    fallback: bool,
    best_similarity: float,
    query_idf: float = 0.0,
    missing_idf: float = 0.0,
    rule: str = "calibrated",
    threshold: float = THRESHOLD,
) -> Verdict:
    """The search's confidence and whether to flag an evidence gap. Both rules flag an empty
    result, and a result with no keyword or exact hit where no memory reaches the semantic
    floor. Rule "calibrated" then flags a confidence below `threshold`; rule "zscore" (the
    simpler one) flags a top score that does not stand out (z < 1.5) among the top 20 and leaves
    the confidence as the estimate, so the number means the same under both rules."""
    if not ordered:
        return Verdict(0.0, True, Signals())
    signals = measure(ordered, lists, query_idf=query_idf, missing_idf=missing_idf)
    value = estimate(signals)
    if rule == "zscore":
        gap = weak_evidence(ordered, lists, fallback=fallback, best_similarity=best_similarity)
        return Verdict(value, gap, signals)
    strong_text = bool(lists.get("keyword")) or bool(lists.get("exact"))
    floor = not strong_text and (fallback or best_similarity < SEMANTIC_MIN)
    return Verdict(value, floor or value < threshold, signals)
