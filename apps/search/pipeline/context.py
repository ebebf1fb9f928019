"""Dialog context: a candidate's keyword and semantic scores borrow from its temporal
neighbours (a dialog turn is read in the context of the turns around it)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from . import fuse

CONTEXT_SHARE = 0.3
STRATEGIES = ("keyword", "semantic")


def borrow_context(
    scores: Mapping[str, float], neighbours: Mapping[str, Iterable[str]], share: float
) -> dict[str, float]:
    """Each memory adds `share` x the best score among its neighbours."""
    out = {}
    for key, value in scores.items():
        best = max((scores.get(n, 0.0) for n in neighbours.get(key, ())), default=0.0)
        out[key] = value + share * best
    return out


def with_context(
    normalized: Mapping[str, Mapping[str, float]],
    neighbours: Mapping[str, Iterable[str]],
    share: float = CONTEXT_SHARE,
) -> dict[str, Mapping[str, float]]:
    """The normalized per-strategy scores with context borrowed, rescaled to 0..1."""
    out = dict(normalized)
    for strategy in STRATEGIES:
        if strategy in out:
            out[strategy] = fuse.minmax(borrow_context(out[strategy], neighbours, share))
    return out
