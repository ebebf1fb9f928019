"""Stage 5: co-activation. The top hits spread score along temporal and graph neighbours.

Temporal neighbours are the memories just before and after one in time order (within the
same scope and a maximum gap). Memories that share one timestamp (a conversation session
imported with its session date) keep their source order: the natural order of their
external ids ("D1:2" before "D1:10"); without external ids a tie has no order, and tied
memories are not neighbours.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from apps.memories.natural_order import natural_key
from apps.search.types import Ranked

from .reads.semantic import SEMANTIC_MIN

COACTIVATION_SHARE = 0.2
COACTIVATION_TOP = 5
MAX_GAP = timedelta(hours=2)


def temporal_neighbours(
    rows: Iterable[tuple[str, datetime, str | None]], max_gap: timedelta = MAX_GAP
) -> dict[str, tuple[str, ...]]:
    """rows: (id, created_at, external_id). Returns id -> (previous, next) ids that exist."""
    ordered = in_order(rows)
    return neighbours_on_line([str(r[0]) for r in ordered], links(ordered, max_gap))


def in_order(
    rows: Iterable[tuple[str, datetime, str | None]],
) -> list[tuple[str, datetime, str | None]]:
    """By time, a timestamp's rows by the natural order of their external ids, then by id."""
    return sorted(rows, key=lambda r: (r[1], natural_key(r[2]), str(r[0])))


def links(ordered: Sequence[tuple[str, Any, str | None]], max_gap: Any) -> list[bool]:
    """Whether each row (id, time, external id; in temporal_neighbours' order) and the next
    are neighbours: not an unordered tie (one timestamp, not both with an external id) and no
    more than `max_gap` apart, in the unit of the times (a timedelta beside datetimes,
    microseconds beside the kept rows' integers)."""
    out = []
    for (_, made, external), (_, next_made, next_external) in zip(
        ordered, ordered[1:], strict=False
    ):
        unordered_tie = next_made == made and not (external and next_external)
        out.append(not unordered_tie and next_made - made <= max_gap)
    return out


def neighbours_on_line(ids: Sequence[str], linked: Sequence[bool]) -> dict[str, tuple[str, ...]]:
    """id -> (previous, next) of those linked (`linked[k]`: ids[k] and ids[k + 1])."""
    out: dict[str, tuple[str, ...]] = {}
    last = len(ids) - 1
    for k, key in enumerate(ids):
        back = k > 0 and linked[k - 1]
        ahead = k < last and linked[k]
        if back and ahead:
            out[key] = (ids[k - 1], ids[k + 1])
        elif back:
            out[key] = (ids[k - 1],)
        elif ahead:
            out[key] = (ids[k + 1],)
        else:
            out[key] = ()
    return out


def coactivate(
    scores: Mapping[str, float],
    temporal: Mapping[str, Iterable[str]],
    graph: Mapping[str, Iterable[tuple[str, float]]],
    *,
    share: float | None = None,
    top: int = COACTIVATION_TOP,
    eligible: Collection[str] | None = None,
) -> tuple[dict[str, float], set[str]]:
    """The `top` memories spread `share` of their score to temporal neighbours and
    (scaled by edge weight) to graph neighbours. `top` <= 0 spreads from every memory.
    Only `eligible` memories receive (None: all), and then in proportion to their own score
    relative to the best: a neighbour with no evidence of its own for the query must not ride
    into the results on its neighbour's score, nor overtake a memory that matches the query
    better (a one-word query in a small namespace would otherwise return whatever was
    written a minute later). Returns new scores and the ids that received activation."""
    share = COACTIVATION_SHARE if share is None else share
    out = dict(scores)
    ordered = sorted(scores, key=lambda k: -scores[k])
    sources = ordered if top <= 0 else ordered[:top]
    received: set[str] = set()
    gained: dict[str, float] = {}
    best = max(scores.values(), default=0.0)
    for key in sources:
        pairs = [(n, 1.0) for n in temporal.get(key, ())] + list(graph.get(key, ()))
        for neighbour, weight in pairs:
            if eligible is not None:
                if neighbour not in eligible or best <= 0:
                    continue
                weight *= max(scores.get(neighbour, 0.0), 0.0) / best
            gain = share * scores[key] * weight
            if gain > gained.get(neighbour, 0.0):
                gained[neighbour] = gain
    for neighbour, gain in gained.items():
        out[neighbour] = out.get(neighbour, 0.0) + gain
        received.add(neighbour)
    return out, received


def spread(
    items: Sequence[Ranked],
    temporal: Mapping[str, Iterable[str]],
    graph: Mapping[str, Iterable[tuple[str, float]]],
    *,
    top: int = COACTIVATION_TOP,
    gated: bool = True,
) -> list[Ranked]:
    """The stage over ranked items: those that received activation get their new score and
    the reason "coactivation"; the boost records the amount added. `gated`: only memories
    the query reaches on its own receive (see coactivate and reached_by_query)."""
    eligible = reached_by_query(items) if gated else None
    scores, received = coactivate(
        {r.id: r.score for r in items}, temporal, graph, top=top, eligible=eligible
    )
    return [
        r.rescored(scores[r.id], ("coactivation", scores[r.id] - r.score), reason="coactivation")
        if r.id in received
        else r
        for r in items
    ]


def reached_by_query(items: Sequence[Ranked]) -> set[str]:
    """Memories the query reaches on its own: a lexical match or a cosine at the semantic
    floor (not only fetched as some hit's neighbour)."""
    return {r.id for r in items if reaches(r)}


def reaches(r: Ranked) -> bool:
    """Whether the query reaches this memory on its own (see reached_by_query)."""
    evidence = r.evidence  # None: nothing measured, which reaches nothing
    return evidence is not None and (evidence.lexical > 0 or evidence.similarity >= SEMANTIC_MIN)
