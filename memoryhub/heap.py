"""The cyclic garbage collector, set for a long-running server process once it has warmed up."""

from __future__ import annotations

import gc

# A search allocates a few thousand short-lived objects and makes almost no reference cycles,
# so young objects are collected after this many net allocations rather than Python's 700.
YOUNG_COLLECTION_THRESHOLD = 10_000


def settle_heap() -> None:
    """After warm-up, everything alive (modules, the model, settings, caches) lives as long as
    the process. Frozen, the cyclic collector no longer walks it: a full collection walked
    ~160k such objects, ~150 ms at a time, every ~45 searches (locomo-dev: ~7 ms a search
    on average, most of it in the slowest searches), and a young one ran ~6 times a search."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, middle, old)
