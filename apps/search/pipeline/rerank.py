"""Stages 6, 8, 9: boosts, per-file diversity and MMR. Pure functions over candidates."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from apps.search.types import Candidate

DECAY_WEIGHT = 0.2
PAGERANK_WEIGHT = 0.1
ENTITY_BOOST = 0.5
MMR_LAMBDA = {"understand": 0.5, "fix_bug": 0.85}
MMR_DEFAULT_LAMBDA = 0.7
MMR_WINDOW = 20


def entity_boost(
    candidates: Sequence[Candidate], tag_entities: Sequence[str], factor: float | None = None
) -> None:
    """Memories tagged with a tag the query names (a person, a component) gain `factor`."""
    factor = ENTITY_BOOST if factor is None else factor
    wanted = {t.lower() for t in tag_entities}
    if not wanted:
        return
    for c in candidates:
        if wanted.intersection(t.lower() for t in c.tags):
            c.score *= 1.0 + factor
            c.reasons.append("entity")


def decay_factor(stability: float) -> float:
    """Multiplier from the stored stability (1 = fresh). The decay job already scales
    stability by tier (constitutional 0.1 ... scratch 3.0), so it is not scaled again here."""
    return 1.0 - DECAY_WEIGHT * (1.0 - max(0.0, min(1.0, stability)))


def apply_boosts(candidates: Sequence[Candidate], quality_boost: float = 0.0) -> None:
    """Relevance blended with quality (0..1), times decay, plus a small pagerank share.

    Stored PageRank is a probability over the namespace (mean 1/N), so it is taken relative
    to the best-ranked candidate: equal scores (e.g. no edges at all) change nothing.
    """
    top_rank = max((c.pagerank for c in candidates), default=0.0)
    for c in candidates:
        score = (1.0 - quality_boost) * c.score + quality_boost * c.importance
        score *= decay_factor(c.stability)
        if top_rank > 0:
            score *= 1.0 + PAGERANK_WEIGHT * (c.pagerank / top_rank)
        c.score = score


def diversify(candidates: Sequence[Candidate], max_per_file: int) -> list[Candidate]:
    """Keep order; at most `max_per_file` results share one non-empty file_path (0 = off)."""
    if max_per_file <= 0:
        return list(candidates)
    seen: dict[str, int] = {}
    kept = []
    for c in candidates:
        if c.file_path:
            seen[c.file_path] = seen.get(c.file_path, 0) + 1
            if seen[c.file_path] > max_per_file:
                continue
        kept.append(c)
    return kept


def mmr_lambda(intent: str) -> float:
    return MMR_LAMBDA.get(intent, MMR_DEFAULT_LAMBDA)


def mmr(candidates: Sequence[Candidate], lam: float, window: int = MMR_WINDOW) -> list[Candidate]:
    """Maximal marginal relevance over the top `window` (those with embeddings); the rest
    keep their order behind them. Relevance is the candidate score scaled to 0..1."""
    head = [c for c in candidates[:window] if c.embedding is not None]
    if len(head) < 3:
        return list(candidates)
    tail = [c for c in candidates if c not in head]
    scores = np.array([c.score for c in head], dtype=np.float64)
    span = scores.max() - scores.min()
    rel = (scores - scores.min()) / span if span > 1e-12 else np.ones_like(scores)
    vectors = np.vstack([np.asarray(c.embedding, dtype=np.float32) for c in head])
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
