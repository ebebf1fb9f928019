"""What a create returns for each memory: the row, whether it is new, and what the checks found."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..models import Memory, Review


@dataclass
class WriteResult:
    memory: Memory
    created: bool
    duplicate_of: Memory | None = None
    near_duplicates: list[dict[str, Any]] = field(default_factory=list)
    chunks: list[Memory] = field(default_factory=list)
    inferred_tags: list[str] = field(default_factory=list)
    # Stored memories this one reads like an update of (id, title, why): not superseded,
    # queued for a person; the writer confirms with `supersedes`.
    possible_updates: list[dict[str, Any]] = field(default_factory=list)
    # Stored memories this one negates (id, title, why): queued as contradictions for a person
    # to decide which holds; never offered as an update.
    possible_contradictions: list[dict[str, Any]] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)  # ids whose validity this one ended
    caused_by: list[str] = field(default_factory=list)  # ids linked to it by `caused`
    depends_on: list[str] = field(default_factory=list)  # ids it links to by `depends_on`
    redacted: list[str] = field(default_factory=list)  # kinds of credential replaced

    @property
    def pending(self) -> bool:
        """Stored, but waiting for review: found by nothing until an editor approves it."""
        return self.memory.review == Review.PENDING

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": str(self.memory.id),
            "created": self.created,
            "duplicate_of": str(self.duplicate_of.id) if self.duplicate_of else None,
            "near_duplicates": self.near_duplicates,
            "chunks": [str(c.id) for c in self.chunks],
            "inferred_tags": self.inferred_tags,
            "valid_from": self.memory.effective_valid_from.isoformat(),
            "valid_until": _iso(self.memory.valid_until),
            "supersedes": self.superseded,
            "caused_by": self.caused_by,
            "depends_on": self.depends_on,
            "possible_updates": [
                {k: u[k] for k in ("id", "title", "why")} for u in self.possible_updates
            ],
            "possible_contradictions": [
                {k: u[k] for k in ("id", "title", "why")} for u in self.possible_contradictions
            ],
            "review": self.memory.review,
            "review_reason": self.memory.review_reason,
            "risk": self.memory.risk,
            "redacted": self.redacted,
        }


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None
