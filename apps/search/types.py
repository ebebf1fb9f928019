"""Small value types passed between the pipeline stages."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any, TypeVar

T = TypeVar("T")
_set = object.__setattr__


def unchecked(cls: type[T], state: dict[str, Any], changes: Mapping[str, Any] | None = None) -> T:
    """An instance of a frozen dataclass from the value of every one of its fields, without
    running __init__: a frozen __init__ sets each field through object.__setattr__ (~4 us for
    Ranked's nineteen), and a search builds a few hundred rows, evidences and items. `state`
    and then `changes` (an item's fields, then what changes) together must name every field
    (tests/search/test_retrieve.py checks the callers build what __init__ would)."""
    values = state.copy()  # one block copy of a whole dict: no rehashing, no constructor call
    if changes:
        values.update(changes)
    return adopted(cls, values)


def adopted(cls: type[T], state: dict[str, Any]) -> T:
    """unchecked() for a dict built for this one instance (the row fetch's rows, the pool's
    evidence and items): the instance takes it as its own, without the copy."""
    new = object.__new__(cls)
    _set(new, "__dict__", state)
    return new


@dataclass(frozen=True)
class Hit:
    """One candidate as a single retriever saw it."""

    id: str
    score: float


@dataclass(frozen=True)
class CandidateRow:
    """One candidate's row as the row fetch reads it (pipeline/rows.py): what the re-rankers
    need, and its evidence under each strategy, computed in the database."""

    created_at: datetime
    external_id: str | None
    file_path: str
    tier: str
    importance: float
    stability: float
    pagerank: float
    tags: tuple[str, ...]
    lexical: float  # BM25 score of the query's terms (0: none)
    similarity: float  # cosine to the vector the semantic strategies match
    asks: bool  # the text ends with a question mark
    # cosine to each further vector asked for, by name ("feedback", "query_similarity"), and
    # "passage": the best passage's cosine to the matched vector
    cosines: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Evidence:
    """What a candidate scores under the whole-pool strategies, whichever strategy found it:
    the keyword score, the semantic similarity (the memory's or its best passage's), the
    cosine to the feedback vector when that strategy ran, and the whole memory's cosine to
    the query's own vector when it differs from `similarity` (the confidence estimate was
    calibrated on it)."""

    lexical: float
    similarity: float
    feedback: float | None = None
    query_similarity: float | None = None

    @property
    def own_similarity(self) -> float:
        """The cosine the confidence estimate reads."""
        return self.similarity if self.query_similarity is None else self.query_similarity

    def as_scores(self) -> dict[str, float]:
        """The evidence as the explain view lists it, beside the strategies' raw scores."""
        scores = {"_lexical": self.lexical, "_similarity": self.similarity}
        if self.feedback is not None:
            scores["_feedback"] = self.feedback
        if self.query_similarity is not None:
            scores["_query_similarity"] = self.query_similarity
        return scores


NO_EVIDENCE = Evidence(lexical=0.0, similarity=0.0)


@dataclass(frozen=True, eq=False)
class Ranked:
    """A memory under consideration: the one item every re-ranking stage takes and returns.

    Stages never change an item; they return new ones (`rescored`, `copy`).
    `fused` is the score fusion gave it; `score` is where it stands now; `boosts` lists what
    each later stage did to the score (name, factor or added amount), for the explain view.
    Items compare by identity (they carry numpy vectors)."""

    id: str
    score: float = 0.0
    fused: float = 0.0
    # strategy -> 1-based rank within that strategy's candidate list
    ranks: Mapping[str, int] = field(default_factory=dict)
    # strategy -> raw score (lexical rank score, cosine similarity, graph weight, ...)
    raw: Mapping[str, float] = field(default_factory=dict)
    # measured by the row fetch for every candidate of a query (None: browse, exact mode)
    evidence: Evidence | None = None
    reasons: tuple[str, ...] = ()
    boosts: tuple[tuple[str, float], ...] = ()
    created_at: datetime | None = None
    external_id: str | None = None
    file_path: str = ""
    tier: str = "normal"
    importance: float = 0.5
    stability: float = 1.0
    pagerank: float = 0.0
    tags: tuple[str, ...] = ()
    asks: bool = False  # the memory's text is a question (ends with "?")
    embedding: Any = None  # numpy vector, unit length; set for the head before MMR

    @property
    def measured(self) -> Evidence:
        """The evidence, zeros where none was measured."""
        return self.evidence or NO_EVIDENCE

    def rescored(
        self, score: float, *boosts: tuple[str, float], reason: str | None = None
    ) -> Ranked:
        """A copy with a new score, recording the boosts and the reason that produced it."""
        reasons = self.reasons
        if reason and reason not in reasons:
            reasons = (*reasons, reason)
        changes = {"score": score, "boosts": self.boosts + boosts, "reasons": reasons}
        return unchecked(Ranked, self.__dict__, changes)  # names known: no check as in copy()

    def copy(self, **changes: Any) -> Ranked:
        """`dataclasses.replace` without re-running __init__ over all fifteen fields: the
        stages copy every candidate several times per search, and replace() was ~5% of a
        search's CPU. Only existing fields may change."""
        unknown = changes.keys() - _RANKED_FIELDS
        if unknown:
            raise TypeError(f"Ranked has no field(s) {', '.join(sorted(unknown))}")
        return unchecked(Ranked, self.__dict__, changes)


_RANKED_FIELDS = frozenset(f.name for f in fields(Ranked))


@dataclass(frozen=True)
class QueryAnalysis:
    text: str
    intent: str = "lookup"
    intent_scores: dict[str, float] = field(default_factory=dict)
    entities: tuple[str, ...] = ()
    tag_entities: tuple[str, ...] = ()
    file_paths: tuple[str, ...] = ()
    phrases: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    is_question: bool = False
    after: datetime | None = None
    before: datetime | None = None
    time_phrase: str = ""
    subject: str | None = None  # the tag the query asks about, of several it names
    asks_when: bool = False  # "When did ...", "What year ...": the answer is a time
    # "cause" (a why-question), "effect" (what did X lead to) or None: the why path's direction
    causal: str | None = None
