"""Dialog context: a candidate's keyword and semantic scores borrow from the turns around it
(a dialog turn is read in the context of the turns before and after it).

Inside a dialog session (turns sharing one timestamp, ordered by their source ids: a
conversation imported with its session date) the window reaches two turns each way. In a
dialog of two speakers the turn two back is the same speaker's previous turn, which the turn
continues ("Check out my painting for the art show!" ... "I painted this after I visited a
LGBTQ center."), and the turn two ahead is the speaker's next one; a turn one away is usually
the other speaker's question or reply. Elsewhere (notes written minutes apart) the window is
the memory before and after: a note two away is another note, not a continuation, and letting
it borrow would lift an unrelated note into a one-word query's results. A memory without an
external id (a note) is not on the line itself, though: the neighbours' read takes a moment's
own rows only when they have one (reads/neighbours.py), so a note borrows nothing, while the
memories before and after it are on the line.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from . import fuse

CONTEXT_SHARE = 0.3
CONTEXT_REACH = 2  # turns each way
STRATEGIES = ("keyword", "semantic")


@dataclass(frozen=True)
class Chain:
    """The candidates' temporal neighbours as one line (coactivate's order and links):
    each memory's previous and next are its neighbours on the line when `linked` says so, and
    a session is a run of memories sharing one timestamp."""

    ids: list[str]
    position: dict[str, int]  # id -> its place on the line
    linked: npt.NDArray[np.bool_]  # [k]: ids[k] and ids[k + 1] are neighbours (last: False)
    session: npt.NDArray[np.int64]  # one number a timestamp (equal for equal timestamps)

    @classmethod
    def of(cls, ordered: Sequence[tuple[str, Any, Any]], linked: Sequence[bool]) -> Chain:
        """`ordered`: (id, timestamp, ...) in the line's order; `linked`: coactivate.links."""
        ids = [str(r[0]) for r in ordered]
        changes = [k > 0 and r[1] != ordered[k - 1][1] for k, r in enumerate(ordered)]
        return cls(
            ids=ids,
            position={key: i for i, key in enumerate(ids)},
            linked=np.array([*linked, False], dtype=np.bool_)[: len(ids)],
            session=np.cumsum(np.array(changes, dtype=np.int64)),
        )

    def windows(self, keys: Sequence[str], reach: int = CONTEXT_REACH) -> npt.NDArray[np.intp]:
        """Each key's turns up to `reach` steps away along the line, as places on it: one row
        per key, columns nearest first (one back, one ahead, two back, two ahead, ...), -1
        where there is none (a key not on the line has none). Beyond the adjacent memories
        the window stays inside the key's session: in a dialog of two speakers the turn two
        back is the same speaker's previous turn; a note two away is another note."""
        at = np.array([self.position.get(k, -1) for k in keys], dtype=np.intp)
        out = np.full((len(keys), 2 * max(reach, 0)), -1, dtype=np.intp)
        if not self.ids:
            return out
        last = len(self.ids) - 1
        back, ahead = at.copy(), at.copy()
        for step in range(max(reach, 0)):
            back = self._step(back, at, -1, step > 0, last)
            ahead = self._step(ahead, at, 1, step > 0, last)
            out[:, 2 * step], out[:, 2 * step + 1] = back, ahead
        return out

    def _step(
        self,
        at: npt.NDArray[np.intp],
        keys: npt.NDArray[np.intp],
        way: int,
        in_session: bool,
        last: int,
    ) -> npt.NDArray[np.intp]:
        """One step further along the line from `at` (-1: stopped), -1 where no link goes on."""
        nxt = at + way
        ok = (at >= 0) & (nxt >= 0) & (nxt <= last)
        link = np.where(ok, np.minimum(at, nxt), 0)  # the link between the two places
        ok &= self.linked[link]
        if in_session:
            ok &= self.session[np.where(ok, nxt, 0)] == self.session[np.where(ok, keys, 0)]
        return np.where(ok, nxt, -1)

    def missing(self, keys: Sequence[str], known: Collection[str], reach: int) -> list[str]:
        """The memories in the keys' windows that `known` lacks, in the keys' order, each once."""
        places = self.windows(keys, reach).ravel().tolist()
        ids = self.ids
        return list(dict.fromkeys(ids[i] for i in places if i >= 0 and ids[i] not in known))

    def rows(self, keys: Sequence[str], reach: int) -> npt.NDArray[np.intp]:
        """Each key's window as positions in `keys` (for borrow_context): len(keys) stands for
        a neighbour outside them, len(keys) + 1 for no neighbour."""
        outside, padding = len(keys), len(keys) + 1
        place_of = np.full(len(self.ids) + 1, outside, dtype=np.intp)
        for i, key in enumerate(keys):
            at = self.position.get(key)
            if at is not None:
                place_of[at] = i
        place_of[-1] = padding  # a window's -1
        return place_of[self.windows(keys, reach)]


def borrow_context(
    scores: npt.NDArray[np.float64], neighbours: npt.NDArray[np.intp], share: float
) -> npt.NDArray[np.float64]:
    """Each member adds `share` x the best score among its neighbours (`Chain.rows`;
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
    `neighbours`: each member's context window (`Chain.rows`)."""
    out = dict(normalized)
    for strategy in STRATEGIES:
        if strategy in out:
            out[strategy] = fuse.minmax(borrow_context(out[strategy], neighbours, share))
    return out
