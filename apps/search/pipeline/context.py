"""Dialog context: a candidate's keyword and semantic scores borrow from the turns around it
(a dialog turn is read in the context of the turns before and after it).

Inside a dialog session (turns sharing one timestamp, ordered by their source ids: a
conversation imported with its session date) the window reaches two turns each way. In a
dialog of two speakers the turn two back is the same speaker's previous turn, which the turn
continues ("Check out my painting for the art show!" ... "I painted this after I visited a
LGBTQ center."), and the turn two ahead is the speaker's next one; a turn one away is usually
the other speaker's question or reply. Elsewhere (notes written minutes apart) the window is
the memory before and after: a note two away is another note, not a continuation, and letting
it borrow would lift an unrelated note into a one-word query's results.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from . import fuse

CONTEXT_SHARE = 0.3
CONTEXT_REACH = 2  # turns each way
STRATEGIES = ("keyword", "semantic")


def window(
    neighbours: Mapping[str, Iterable[str]],
    reach: int = CONTEXT_REACH,
    sessions: Mapping[str, Hashable] | None = None,
    keys: Iterable[str] | None = None,
) -> dict[str, tuple[str, ...]]:
    """Each memory's turns up to `reach` steps away along the temporal neighbours (the chain
    coactivate.temporal_neighbours builds: previous and next), nearest first. With
    `sessions` (id -> session key, here the timestamp), the steps beyond the adjacent
    memories stay inside the memory's own session. `keys`: only these memories' windows (the
    candidates'; the chain also holds the turns around them, whose own windows nobody reads)."""
    out: dict[str, tuple[str, ...]] = {}
    chosen = neighbours if keys is None else [k for k in keys if k in neighbours]
    for key in chosen:
        seen = {key}
        frontier: Iterable[str] = (key,)
        found: list[str] = []
        own = sessions.get(key) if sessions is not None else None
        for step_number in range(max(reach, 0)):
            step: list[str] = []
            for k in frontier:
                for n in neighbours.get(k, ()):
                    if n in seen:
                        continue
                    beyond = step_number and sessions is not None
                    if beyond and (own is None or (sessions or {}).get(n) != own):
                        continue
                    seen.add(n)  # also keeps a turn reached twice in one step once
                    step.append(n)
            found += step
            frontier = step
        out[key] = tuple(found)
    return out


def neighbour_rows(
    keys: Sequence[str], neighbours: Mapping[str, Iterable[str]]
) -> npt.NDArray[np.intp]:
    """Each pool member's context window (see `window`) as positions in the pool, one row of
    the result per member: len(keys) stands for a neighbour outside the pool, len(keys) + 1
    fills a window shorter than the longest."""
    position = {key: i for i, key in enumerate(keys)}
    outside, padding = len(keys), len(keys) + 1
    windows = [[position.get(n, outside) for n in neighbours.get(key, ())] for key in keys]
    width = max(map(len, windows), default=0)
    rows = np.full((len(keys), width), padding, dtype=np.intp)
    for i, found in enumerate(windows):
        rows[i, : len(found)] = found
    return rows


def borrow_context(
    scores: npt.NDArray[np.float64], neighbours: npt.NDArray[np.intp], share: float
) -> npt.NDArray[np.float64]:
    """Each member adds `share` x the best score among its neighbours (`neighbour_rows`;
    a neighbour outside the pool scores 0; no neighbour, nothing added)."""
    if not neighbours.shape[1]:
        return scores.copy()
    padded = np.concatenate([scores, [0.0, -np.inf]])  # outside the pool, padding
    best = padded[neighbours].max(axis=1)
    best[best == -np.inf] = 0.0
    result: npt.NDArray[np.float64] = scores + share * best
    return result


def with_context(
    normalized: fuse.Columns, neighbours: npt.NDArray[np.intp], share: float = CONTEXT_SHARE
) -> dict[str, npt.NDArray[np.float64]]:
    """The normalized per-strategy scores with context borrowed, rescaled to 0..1.
    `neighbours`: each member's context window (`neighbour_rows`)."""
    out = dict(normalized)
    for strategy in STRATEGIES:
        if strategy in out:
            out[strategy] = fuse.minmax(borrow_context(out[strategy], neighbours, share))
    return out
