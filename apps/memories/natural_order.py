"""The natural order of external ids ("D1:9" before "D1:10"), which orders the turns of a dialog
session for the write path and for search alike."""

from __future__ import annotations

import re
from functools import lru_cache

_DIGITS = re.compile(r"(\d+)")


@lru_cache(maxsize=65_536)  # external ids repeat from search to search; the split is not free
def natural_key(text: str | None) -> tuple:
    """ "D1:9" before "D1:10": digits compare as numbers. Cached: the search's neighbour
    chains sort the same dialog ids on every search."""
    parts = _DIGITS.split(text or "")
    return tuple(int(p) if p.isdigit() else p for p in parts)
