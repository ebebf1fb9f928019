"""A readable difference between two versions of a memory, for the web UI to render.

Per field: before and after. For text fields also a word-level diff: a list of
(op, text) segments where op is "equal", "insert" or "delete", whitespace kept so that
joining the "equal" and "insert" pieces gives the new text back.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any

from apps.memories.revisions import TRACKED

from .models import MemoryRevision
from .selectors import revision_state, revision_state_before

TEXT_FIELDS = ("content", "title")
_TOKENS = re.compile(r"\s+|[^\s]+")


@dataclass(frozen=True)
class FieldDiff:
    name: str
    before: Any
    after: Any
    words: list[tuple[str, str]] = field(default_factory=list)


def word_diff(before: str, after: str) -> list[tuple[str, str]]:
    """Segments of (op, text); adjacent segments of one op are joined."""
    old, new = _TOKENS.findall(before or ""), _TOKENS.findall(after or "")
    segments: list[tuple[str, str]] = []

    def add(op: str, tokens: list[str]) -> None:
        if not tokens:
            return
        text = "".join(tokens)
        if segments and segments[-1][0] == op:
            segments[-1] = (op, segments[-1][1] + text)
        else:
            segments.append((op, text))

    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            add("equal", old[i1:i2])
        else:
            add("delete", old[i1:i2])
            add("insert", new[j1:j2])
    return segments


def states_diff(before: dict[str, Any], after: dict[str, Any]) -> list[FieldDiff]:
    """Fields that differ between two states, in the order of TRACKED."""
    diffs = []
    for name in TRACKED:
        old, new = before.get(name), after.get(name)
        if old == new:
            continue
        words = word_diff(old or "", new or "") if name in TEXT_FIELDS else []
        diffs.append(FieldDiff(name, old, new, words))
    return diffs


def revision_diff(revision: MemoryRevision) -> list[FieldDiff]:
    """What one revision changed (a creation shows every field as new)."""
    return states_diff(revision_state_before(revision), revision_state(revision))


def revisions_diff(older: MemoryRevision, newer: MemoryRevision) -> list[FieldDiff]:
    """What changed from the version after `older` to the version after `newer`."""
    if (older.namespace_id, older.memory_id) != (newer.namespace_id, newer.memory_id):
        raise ValueError("Both revisions must belong to one memory.")
    return states_diff(revision_state(older), revision_state(newer))
