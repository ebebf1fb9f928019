"""What the write path derives from a memory's text: the string that gets embedded and the
hash that finds exact duplicates. Shared by the services and the re-embedding job, so a
re-embedded memory matches a freshly written one. Also the natural order of external ids,
which orders the turns of a dialog session for the write path and for search alike."""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache

_DIGITS = re.compile(r"(\d+)")


def content_hash(content: str) -> str:
    return hashlib.sha256(content.strip().encode()).hexdigest()


def embedding_text(title: str, content: str) -> str:
    return f"{title}\n{content}" if title and title not in content else content


@lru_cache(maxsize=65536)  # external ids repeat from search to search; the split is not free
def natural_key(text: str | None) -> tuple:
    """ "D1:9" before "D1:10": digits compare as numbers."""
    parts = _DIGITS.split(text or "")
    return tuple(int(p) if p.isdigit() else p for p in parts)
