"""Session-level scoring: a memory is read as part of the session it was written in.

A question about one conversation is usually answered inside the session that talks about it,
and the evidence turn is often not the one that repeats the question's words. Memories sharing
one timestamp form a session (a conversation imported with its session date, or a batch written
together); a session in which several memories match the query lifts all its members that the
query itself reaches. A memory alone in its timestamp is its own session, so on stores without
sessions the lift is proportional to the memory's own score and changes no order.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Hashable, Mapping, Sequence

from apps.search.types import Ranked

from .coactivate import reached_by_query

SESSION_TOP = 3  # a session's strength: the sum of its best few scores


def session_lift(
    scores: Mapping[str, float],
    sessions: Mapping[str, Hashable],
    *,
    share: float,
    eligible: Collection[str] | None = None,
) -> dict[str, float]:
    """New scores: each eligible memory gains share x best score x (its session's strength /
    the strongest session's)."""
    if share <= 0 or not scores:
        return dict(scores)
    members: dict[Hashable, list[float]] = defaultdict(list)
    for key, value in scores.items():
        members[sessions.get(key, key)].append(value)
    strength = {s: sum(sorted(v, reverse=True)[:SESSION_TOP]) for s, v in members.items()}
    strongest = max(strength.values())
    best = max(scores.values())
    if strongest <= 0 or best <= 0:
        return dict(scores)
    out = dict(scores)
    for key, value in scores.items():
        if eligible is not None and key not in eligible:
            continue
        out[key] = value + share * best * strength[sessions.get(key, key)] / strongest
    return out


def lift(items: Sequence[Ranked], *, share: float) -> list[Ranked]:
    """The stage over ranked items: sessions are the items' timestamps; only memories the
    query reaches on its own are lifted; the boost records the amount added."""
    scores = {r.id: r.score for r in items}
    lifted = session_lift(
        scores, {r.id: r.created_at for r in items}, share=share, eligible=reached_by_query(items)
    )
    return [
        r.rescored(lifted[r.id], ("session", lifted[r.id] - r.score), reason="session")
        if lifted[r.id] != r.score
        else r
        for r in items
    ]
