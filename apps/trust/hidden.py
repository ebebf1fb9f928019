"""Characters a reader cannot see: Unicode tag characters, zero-width characters, bidi overrides.

One joiner or direction mark standing next to a non-ASCII letter or emoji is writing, not
hiding: U+200D glues the parts of an emoji (a person and a laptop make a technologist), U+200C
and U+200E/U+200F belong to Persian, Indic, Arabic and Hebrew text. Those are not found (not
flagged, not marked for a person); every other hidden character, and any run of two or more,
is. What an assistant is handed loses them all.
"""

from __future__ import annotations

import re

__all__ = ["HIDDEN", "find_hidden", "hidden_text", "show_hidden", "strip_hidden"]

# Tag characters U+E0000-E007F, zero-width space/joiners/word joiner/BOM, bidi embeddings,
# overrides and isolates, and the soft hyphen/invisible operators that render as nothing.
HIDDEN = re.compile(
    "[\U000e0000-\U000e007f\u200b-\u200f\u2060-\u2064\ufeff\u202a-\u202e\u2066-\u2069\u00ad\u180e]"
)
_RUNS = re.compile(f"(?:{HIDDEN.pattern})+")
_WRITING = frozenset("\u200c\u200d\u200e\u200f")
_TAGS = re.compile("[\U000e0020-\U000e007e]+")


def _is_writing(text: str, start: int, end: int) -> bool:
    if end - start != 1 or text[start] not in _WRITING:
        return False
    neighbours = text[start - 1 : start] + text[end : end + 1]
    return any(ord(c) > 127 and not c.isspace() for c in neighbours)


def _hidden_runs(text: str):
    return (m for m in _RUNS.finditer(text) if not _is_writing(text, m.start(), m.end()))


def find_hidden(text: str) -> list[tuple[int, int]]:
    """(start, end) of each run of hidden characters."""
    if text.isascii():
        return []
    return [(m.start(), m.end()) for m in _hidden_runs(text)]


def hidden_text(run: str) -> str:
    """What a run of tag characters spells (they mirror ASCII), '' when it spells nothing."""
    return "".join(chr(ord(c) - 0xE0000) for part in _TAGS.findall(run) for c in part)


def strip_hidden(text: str) -> str:
    """The text an assistant is handed: every hidden character removed, the joiners of emoji
    and words too (an emoji falls apart into its parts, which an assistant reads as well), so
    no zero-width or bidi character ever reaches it."""
    return HIDDEN.sub("", text)


def show_hidden(text: str) -> str:
    """The text a person reads: each hidden character written as its code point, e.g. [U+200B]."""
    if text.isascii():
        return text
    for start, end in reversed(find_hidden(text)):
        shown = "".join(f"[U+{ord(c):04X}]" for c in text[start:end])
        text = text[:start] + shown + text[end:]
    return text
