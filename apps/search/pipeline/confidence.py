"""Stage 10: is the best result clearly better than the rest, or is this an evidence gap?"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

from apps.search.types import Ranked

from .retrieve import SEMANTIC_MIN

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
    lists: Mapping[str, Sequence],
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
