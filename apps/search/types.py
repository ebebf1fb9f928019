"""Small value types passed between the pipeline stages."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True)
class Hit:
    """One candidate as a single retriever saw it."""

    id: str
    score: float


@dataclass
class Candidate:
    """A memory under consideration, with everything the re-ranking stages need."""

    id: str
    score: float = 0.0
    # strategy -> 1-based rank within that strategy's candidate list
    ranks: dict[str, int] = field(default_factory=dict)
    # strategy -> raw score (lexical rank score, cosine similarity, graph weight, ...)
    raw: dict[str, float] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)
    created_at: datetime | None = None
    external_id: str | None = None
    file_path: str = ""
    tier: str = "normal"
    importance: float = 0.5
    stability: float = 1.0
    pagerank: float = 0.0
    tags: tuple[str, ...] = ()
    embedding: object = None  # numpy vector, unit length


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
