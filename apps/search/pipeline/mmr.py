"""Stage 9: maximal marginal relevance over the top candidates' embeddings, lambda by intent."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from apps.search.types import Ranked

MMR_LAMBDA = {"understand": 0.5, "fix_bug": 0.85}
MMR_DEFAULT_LAMBDA = 0.7
MMR_WINDOW = 20


def mmr_lambda(intent: str) -> float:
    return MMR_LAMBDA.get(intent, MMR_DEFAULT_LAMBDA)


def mmr(items: Sequence[Ranked], lam: float, window: int = MMR_WINDOW) -> list[Ranked]:
    """Maximal marginal relevance over the top `window` (those with embeddings); the rest
    keep their order behind them. Relevance is the candidate score scaled to 0..1."""
    head = [r for r in items[:window] if r.embedding is not None]
    if len(head) < 3:
        return list(items)
    picked = {id(r) for r in head}
    tail = [r for r in items if id(r) not in picked]
    scores = np.array([r.score for r in head], dtype=np.float64)
    span = scores.max() - scores.min()
    rel = (scores - scores.min()) / span if span > 1e-12 else np.ones_like(scores)
    vectors = np.vstack([np.asarray(r.embedding, dtype=np.float32) for r in head])
    sims = vectors @ vectors.T
    chosen: list[int] = []
    left = list(range(len(head)))
    while left:
        redundancy = sims[np.ix_(left, chosen)].max(axis=1) if chosen else np.zeros(len(left))
        values = lam * rel[left] - (1.0 - lam) * redundancy
        pick = left[int(np.argmax(values))]
        chosen.append(pick)
        left.remove(pick)
    return [head[i] for i in chosen] + tail
