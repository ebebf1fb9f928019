"""Stage 4: fusion of the per-strategy candidate lists.

- `weighted_rrf`: sum over strategies of weight / (k + rank), k = 60 (SPEC).
- `score_fusion`: sum of weight x min-max-normalized score over the candidate pool. Every pool
  member is scored by every strategy first (retrievers complete the missing scores), so a
  memory ranked 150th by one strategy still carries that strategy's evidence. The scores are
  columns (numpy, one value per pool member): a few hundred members, several strategies, per
  search, where dictionaries cost a Python step per member and strategy.
- `fuse_variants`: deep mode; RRF across the query variants plus a +0.10 bonus per extra
  variant that found the memory (convergence).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

RRF_K = 60
# strategy -> one score per member of the candidate pool, in the pool's order
Columns = Mapping[str, npt.NDArray[np.float64]]
CONVERGENCE_BONUS = 0.10


def ranks_of(scores: Mapping[str, float]) -> dict[str, int]:
    """1-based ranks, best first; ties keep insertion order."""
    ordered = sorted(scores, key=lambda key: -scores[key])
    return {key: i + 1 for i, key in enumerate(ordered)}


def weighted_rrf(
    rankings: Mapping[str, Mapping[str, int]], weights: Mapping[str, float], k: int = RRF_K
) -> dict[str, float]:
    fused: dict[str, float] = {}
    for strategy, ranks in rankings.items():
        weight = float(weights.get(strategy, 1.0))
        for key, rank in ranks.items():
            fused[key] = fused.get(key, 0.0) + weight / (k + rank)
    return fused


def minmax(values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Scaled to 0..1 over the pool; when all are equal, 1 where they are positive, else 0."""
    if not len(values):
        return values
    low, high = values.min(), values.max()
    span = high - low
    if span <= 1e-12:
        return np.full(len(values), 1.0 if high > 0 else 0.0)
    result: npt.NDArray[np.float64] = (values - low) / span
    return result


def score_fusion(
    normalized: Columns, weights: Mapping[str, float], size: int
) -> npt.NDArray[np.float64]:
    """Each pool member's weighted mean of its normalized scores (`size` members)."""
    total = sum(float(weights.get(s, 0.0)) for s in normalized) or 1.0
    sums = np.zeros(size)
    for strategy, scores in normalized.items():
        sums += float(weights.get(strategy, 0.0)) * scores
    result: npt.NDArray[np.float64] = sums / total
    return result


def fuse_variants(
    variant_scores: list[Mapping[str, float]], k: int = RRF_K, bonus: float = CONVERGENCE_BONUS
) -> tuple[dict[str, float], dict[str, int]]:
    """Fuse the result lists of several query variants; returns scores and how many variants
    found each memory. The RRF part is scaled so the best possible score is 1.0 per variant,
    which keeps the +0.10 bonus meaningful next to it."""
    fused: dict[str, float] = {}
    found: dict[str, int] = {}
    for scores in variant_scores:
        for key, rank in ranks_of(scores).items():
            fused[key] = fused.get(key, 0.0) + (k + 1) / (k + rank) / len(variant_scores)
            found[key] = found.get(key, 0) + 1
    for key, count in found.items():
        fused[key] += bonus * (count - 1)
    return fused, found


def fuse_pool(
    fusion: str,
    *,
    normalized: Columns,
    lists: Mapping[str, list[tuple[str, float]]],
    weights: Mapping[str, float],
    pool: Sequence[str],
    vector_weight: float,
) -> npt.NDArray[np.float64]:
    """One fused score per pool member, in the pool's order, by the configured fusion
    (SearchSettings.fusion_used): "score" fuses the normalized scores with the adapted
    weights; "rrf" fuses the retrieved ranks (weighted RRF, k = 60); "weighted_sum" is SPEC's
    plain mode, vector_weight x semantic + the rest x keyword, with no adaptation."""
    if fusion == "weighted_sum":
        plain = {"semantic": vector_weight, "keyword": 1.0 - vector_weight}
        chosen = {k: v for k, v in normalized.items() if k in plain}
        return score_fusion(chosen, plain, len(pool))
    active = {s: w for s, w in weights.items() if s in normalized}
    if fusion == "score":
        return score_fusion(normalized, active, len(pool))
    rankings = {s: {k: r for r, (k, _) in enumerate(hits, 1)} for s, hits in lists.items()}
    fused = weighted_rrf(rankings, active)
    return np.array([fused.get(k, 0.0) for k in pool], dtype=np.float64)
