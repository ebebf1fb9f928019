"""Stage 6 and the query-side boosts: entity tags, quality / decay / pagerank, and the time
range the query itself names. Each takes and returns a list of Ranked, in the same order."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from apps.search.types import Ranked

DECAY_WEIGHT = 0.2
PAGERANK_WEIGHT = 0.1
ENTITY_BOOST = 0.5
TIME_MATCH_BOOST = 0.5  # memories inside a time range the query itself mentions
# A memory that is a question ("Cool! What type of music do you play?") shares the words of a
# question about its topic but holds no answer: the answer is the turn after it, which the
# context stage credits. It counts this much (locomo-dev: 25% of the turns end with "?", 13% of
# the evidence turns, 30% of the wrong turns in the top 10 before this rule).
QUESTION_FACTOR = 0.8


def entity_boost(
    items: Sequence[Ranked], tag_entities: Sequence[str], factor: float = ENTITY_BOOST
) -> list[Ranked]:
    """Memories tagged with a tag the query names (a person, a component) gain `factor`."""
    wanted = {t.lower() for t in tag_entities}
    if not wanted:
        return list(items)
    return [
        r.rescored(r.score * (1.0 + factor), ("entity", 1.0 + factor), reason="entity")
        if wanted.intersection(t.lower() for t in r.tags)
        else r
        for r in items
    ]


def question_turns(items: Sequence[Ranked], factor: float = QUESTION_FACTOR) -> list[Ranked]:
    """Memories whose text is a question count `factor` of their score."""
    return [
        r.rescored(r.score * factor, ("question", factor), reason="question") if r.asks else r
        for r in items
    ]


def decay_factor(stability: float) -> float:
    """Multiplier from the stored stability (1 = fresh). The decay job already scales
    stability by tier (constitutional 0.1 ... scratch 3.0), so it is not scaled again here."""
    return 1.0 - DECAY_WEIGHT * (1.0 - max(0.0, min(1.0, stability)))


def apply_boosts(items: Sequence[Ranked], quality_boost: float = 0.0) -> list[Ranked]:
    """Relevance blended with quality (0..1), times decay, plus a small pagerank share.

    Stored PageRank is a probability over the namespace (mean 1/N), so it is taken relative
    to the best-ranked candidate: equal scores (e.g. no edges at all) change nothing.
    """
    top_rank = max((r.pagerank for r in items), default=0.0)
    out = []
    for r in items:
        score = (1.0 - quality_boost) * r.score + quality_boost * r.importance
        decay = decay_factor(r.stability)
        score *= decay
        pagerank = 1.0
        if top_rank > 0:
            pagerank = 1.0 + PAGERANK_WEIGHT * (r.pagerank / top_rank)
            score *= pagerank
        boosts = [("quality", quality_boost)] if quality_boost else []
        boosts += [(name, f) for name, f in (("decay", decay), ("pagerank", pagerank)) if f != 1.0]
        out.append(r.rescored(score, *boosts))
    return out


def time_boost(
    items: Sequence[Ranked],
    after: datetime | None,
    before: datetime | None,
    factor: float = TIME_MATCH_BOOST,
) -> list[Ranked]:
    """Memories inside the time range the query names ("last week") rank higher."""
    if after is None and before is None:
        return list(items)
    return [
        r.rescored(r.score * (1.0 + factor), ("time_match", 1.0 + factor))
        if (after is None or r.created_at >= after) and (before is None or r.created_at < before)
        else r
        for r in items
    ]
