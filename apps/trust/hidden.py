"""Characters a reader cannot see: Unicode tag characters, zero-width characters, bidi overrides."""

from __future__ import annotations

import re

__all__ = ["HIDDEN", "find_hidden", "show_hidden", "strip_hidden"]

# Tag characters U+E0000-E007F, zero-width space/joiners/word joiner/BOM, bidi embeddings,
# overrides and isolates, and the soft hyphen/invisible operators that render as nothing.
HIDDEN = re.compile(
    "[\U000e0000-\U000e007f\u200b-\u200f\u2060-\u2064\ufeff\u202a-\u202e\u2066-\u2069\u00ad\u180e]"
)


def find_hidden(text: str) -> list[tuple[int, int]]:
    """(start, end) of each run of hidden characters."""
    return [(m.start(), m.end()) for m in re.finditer(f"(?:{HIDDEN.pattern})+", text)]


def strip_hidden(text: str) -> str:
    """The text an assistant is handed: hidden characters removed."""
    return HIDDEN.sub("", text)


def show_hidden(text: str) -> str:
    """The text a person reads: each hidden character written as its code point, e.g. [U+200B]."""
    return HIDDEN.sub(lambda m: f"[U+{ord(m.group()):04X}]", text)
