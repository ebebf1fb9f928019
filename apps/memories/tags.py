"""Semantic tag inference (SPEC section 3).

Keywords match whole words only ("prefix" is not a fix, "fixed" is), with plain inflections,
case-insensitively; phrases allow any run of whitespace between their words. Given tags are
never duplicated. A conversation turn gets none: the keywords describe project work, and a
turn saying "my car broke" or "dinner was slow" is no bugfix and no perf note.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

TAG_KEYWORDS: dict[str, tuple[str, ...]] = {
    "bugfix": ("fix", "bug", "error", "issue", "broken", "crash", "failure"),
    "tech-debt": (
        "todo",
        "hack",
        "workaround",
        "temporary",
        "quick fix",
        "tech debt",
        "refactor later",
    ),
    "perf": ("performance", "slow", "fast", "optimize", "speed", "latency", "cache"),
    "warning": ("avoid", "don't", "warn"),
}

TAG_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_.:/-]{0,63}$")


INFLECTIONS = r"(?:s|es|ed|d|ing)?"


def _word(word: str) -> str:
    """A keyword with its plain English inflections: fix -> fixes, fixed, fixing."""
    if not word.isalpha():
        return re.escape(word)
    if word.endswith("e"):  # optimize -> optimizing
        return f"(?:{word}{INFLECTIONS}|{word[:-1]}ing)"
    return word + INFLECTIONS


def _pattern(words: Iterable[str]) -> re.Pattern[str]:
    alternatives = sorted((r"\s+".join(map(_word, w.split())) for w in words), key=len)
    # \b would accept "don't" inside "don'tx"; the look-arounds demand a non-word char or edge.
    return re.compile(r"(?<![\w'])(?:" + "|".join(reversed(alternatives)) + r")(?![\w'])", re.I)


_PATTERNS = {tag: _pattern(words) for tag, words in TAG_KEYWORDS.items()}


def normalize_tag(name: str) -> str:
    return re.sub(r"\s+", "-", name.strip().lower())


def infer_tags(content: str, category: str, given: Iterable[str] = ()) -> list[str]:
    """Tags implied by the content and category that are not already among `given`."""
    if category == "conversation":
        return []
    have = {normalize_tag(t) for t in given}
    inferred = []
    for tag, pattern in _PATTERNS.items():
        if tag in have:
            continue
        if tag == "warning" and category == "warning" or pattern.search(content):
            inferred.append(tag)
    return inferred
