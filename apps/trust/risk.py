"""The risk check: text aimed at an assistant rather than at the team.

`assess(text)` returns the findings, empty when clean. Each is stored on the memory as
`{kind, reason, start, end}` and shown highlighted in the UI and the review queue.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from .hidden import find_hidden

__all__ = ["Risk", "assess"]


@dataclass(frozen=True)
class Risk:
    kind: str  # "instructions", "role", "tool_call", "exfiltration", "data_url", "hidden", ...
    reason: str  # one line a person reads: "asks the assistant to ignore its instructions"
    start: int
    end: int

    def as_dict(self) -> dict:
        return asdict(self)


_OVERRIDE = re.compile(
    r"\b(ignore|disregard|forget)\b.{0,40}\b(previous|prior|above|earlier|your)\b.{0,20}"
    r"\b(instructions?|rules|prompt)\b",
    re.IGNORECASE | re.DOTALL,
)


def assess(text: str) -> list[Risk]:
    """Every finding in `text`, in order of position. (Placeholder rules; see lab/trust.)"""
    found = [
        Risk("hidden", "contains characters a reader cannot see", start, end)
        for start, end in find_hidden(text)
    ]
    found += [
        Risk("instructions", "asks the assistant to ignore its instructions", m.start(), m.end())
        for m in _OVERRIDE.finditer(text)
    ]
    return sorted(found, key=lambda r: (r.start, r.end))
