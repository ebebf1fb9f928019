"""Stage timings of one search, in milliseconds by stage name (the explain view, the query
log and the metrics read them)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")


def elapsed_ms(start: float) -> float:
    """Milliseconds since `start` (a time.perf_counter() reading), to 0.01 ms."""
    return round((time.perf_counter() - start) * 1000, 2)


class Timer:
    """Adds each timed span's milliseconds to timings[name]: `timer("fetch", fn, *args)` runs
    and times one call, `with timer.span("analyse"):` a block."""

    def __init__(self, timings: dict[str, float] | None = None):
        self.timings: dict[str, float] = {} if timings is None else timings

    def __call__(self, name: str, fn: Callable[..., T], *args, **kwargs) -> T:
        with self.span(name):
            return fn(*args, **kwargs)

    @contextmanager
    def span(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            ms = (time.perf_counter() - start) * 1000
            self.timings[name] = round(self.timings.get(name, 0.0) + ms, 2)
