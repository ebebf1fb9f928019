"""Small value types passed between the pipeline stages."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class Hit:
    """One candidate as a single retriever saw it."""

    id: str
    score: float


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

    def rescored(
        self, score: float, *boosts: tuple[str, float], reason: str | None = None
    ) -> Ranked:
        """A copy with a new score, recording the boosts and the reason that produced it."""
        reasons = self.reasons
        if reason and reason not in reasons:
            reasons = (*reasons, reason)
        return self.copy(score=score, boosts=self.boosts + boosts, reasons=reasons)

    def copy(self, **changes: Any) -> Ranked:
        """`dataclasses.replace` without re-running __init__ over all fifteen fields: the
        stages copy every candidate several times per search, and replace() was ~5% of a
        search's CPU. Only existing fields may change."""
        unknown = changes.keys() - _RANKED_FIELDS
        if unknown:
            raise TypeError(f"Ranked has no field(s) {', '.join(sorted(unknown))}")
        new = object.__new__(Ranked)
        state = new.__dict__
        state.update(self.__dict__)
        state.update(changes)
        return new


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
