"""Stage 6 and the query-side boosts: entity tags, quality / decay / pagerank, and the time
range the query itself names. Each takes and returns a list of Ranked, in the same order."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime

from apps.memories.natural_order import natural_key
from apps.search.types import Ranked

from .coactivate import reaches

DECAY_WEIGHT = 0.2
PAGERANK_WEIGHT = 0.1
ENTITY_BOOST = 0.5
TIME_MATCH_BOOST = 0.5  # memories inside a time range the query itself mentions
# A memory that is a question ("Cool! What type of music do you play?") shares the words of a
# question about its topic but holds no answer: the answer is the turn after it, which the
# context stage credits. It counts this much (locomo-dev: 25% of the turns end with "?", 13% of
# the evidence turns, 30% of the wrong turns in the top 10 before this rule).
QUESTION_FACTOR = 0.8
# A question that asks for a time ("When did Alice go to the dentist?") is answered by
# the turn that tells of the event and dates it ("I went to the dentist yesterday"):
# memories that mention a time gain this share (locomo-dev: 79-81% of the evidence turns of
# such questions mention a time, 21-23% of the other turns in their top 10). The same lift as a
# memory inside a time range the query names; 0.2 and 0.4 helped both halves as well.
TIME_ANSWER_BOOST = TIME_MATCH_BOOST
# Only the head of the ranking is looked at (reading every candidate's text cost 5 ms of p95):
# a x1.5 lift does not carry a memory from further down into the first ten.
TIME_ANSWER_HEAD = 50


def entity_boost(
    items: Sequence[Ranked], tag_entities: Sequence[str], factor: float = ENTITY_BOOST
) -> list[Ranked]:
    """Memories tagged with a tag the query names (a person, a component) gain `factor`."""
    wanted = {t.lower() for t in tag_entities}
    if not wanted:
        return list(items)
    named: dict[tuple[str, ...], bool] = {}  # by tag set: most candidates share a few
    out = []
    for r in items:
        hit = named.get(r.tags)
        if hit is None:
            hit = named[r.tags] = bool(wanted.intersection(t.lower() for t in r.tags))
        if hit:
            r = r.rescored(r.score * (1.0 + factor), ("entity", 1.0 + factor), reason="entity")
        out.append(r)
    return out


def question_turns(items: Sequence[Ranked], factor: float = QUESTION_FACTOR) -> list[Ranked]:
    """Memories whose text is a question count `factor` of their score."""
    return [
        r.rescored(r.score * factor, ("question", factor), reason="question") if r.asks else r
        for r in items
    ]


def time_answers(
    items: Sequence[Ranked],
    mention_times: Callable[[list[str]], set[str]],
    factor: float = TIME_ANSWER_BOOST,
    head: int = TIME_ANSWER_HEAD,
) -> list[Ranked]:
    """For a question that asks when: of the `head` best memories, those that mention a time
    (`mention_times` reads their text) gain `factor`."""
    best = sorted(items, key=lambda r: (-r.score, r.id))[:head]
    dated = mention_times([r.id for r in best if r.score > 0])
    return [
        r.rescored(r.score * (1.0 + factor), ("time_answer", 1.0 + factor), reason="time_answer")
        if r.id in dated
        else r
        for r in items
    ]


def answer_turns(
    items: Sequence[Ranked],
    temporal: Mapping[str, Iterable[str]],
    factor: float = QUESTION_FACTOR,
) -> list[Ranked]:
    """The turn right after a question, in the same dialog session, gains what the question
    lost to `question_turns`: (1 / factor - 1) x the question's score. "Cool! What type of
    music do you play?" matches a question about the music; its answer is the next turn. Only
    memories the query reaches on its own gain (a lexical match or a cosine at the floor), and
    a question does not pass its loss on to another question."""
    if factor <= 0 or factor >= 1:
        return list(items)
    asking = [r for r in items if r.asks and r.score > 0 and r.external_id]
    if not asking:
        return list(items)
    by_id = {r.id: r for r in items}
    share = 1.0 / factor - 1.0
    gains: dict[str, float] = {}
    for question in asking:
        answer = _next_turn(question, temporal, by_id)
        if answer is not None and not answer.asks and reaches(answer):
            gains[answer.id] = gains.get(answer.id, 0.0) + share * question.score
    return [
        r.rescored(r.score + gains[r.id], ("answer", gains[r.id]), reason="answer")
        if r.id in gains
        else r
        for r in items
    ]


def _next_turn(
    r: Ranked, temporal: Mapping[str, Iterable[str]], by_id: Mapping[str, Ranked]
) -> Ranked | None:
    """The turn just after `r` in its session: a temporal neighbour with the same timestamp
    and a later external id (an imported dialog session)."""
    own = natural_key(r.external_id)
    for key in temporal.get(r.id, ()):
        n = by_id.get(key)
        if (
            n
            and n.created_at == r.created_at
            and n.external_id
            and natural_key(n.external_id) > own
        ):
            return n
    return None


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
        # Most candidates of a store without edges or decay come out as they went in: no copy.
        out.append(r.rescored(score, *boosts) if boosts or score != r.score else r)
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
        # a candidate without a time (none read for it) is not inside the range
        if r.created_at is not None
        and (after is None or r.created_at >= after)
        and (before is None or r.created_at < before)
        else r
        for r in items
    ]
