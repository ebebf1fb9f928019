"""Stage timings of one search, in milliseconds by stage name (the explain view, the query
log and the metrics read them).

A cost profile (`probe()`, used by `evaluate --profile`) also adds each stage's CPU time on the
calling thread and its SQL statements; outside a profile a span costs two clock reads."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

from django.db.backends.base.base import BaseDatabaseWrapper

T = TypeVar("T")


def elapsed_ms(start: float) -> float:
    """Milliseconds since `start` (a time.perf_counter() reading), to 0.01 ms."""
    return round((time.perf_counter() - start) * 1000, 2)


class Probe:
    """What a profile collects: per stage, the CPU milliseconds of the thread that ran it, its
    wall milliseconds (the database's work shows there) and the SQL statements it sent,
    summed over every search run under it."""

    def __init__(self) -> None:
        self.cpu_ms: dict[str, float] = defaultdict(float)
        self.wall_ms: dict[str, float] = defaultdict(float)
        self.statements: dict[str, int] = defaultdict(int)
        self.sent = 0  # statements so far, counted by the connection wrapper

    def count(
        self, execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any
    ) -> Any:
        self.sent += 1
        return execute(sql, params, many, context)


_probe: ContextVar[Probe | None] = ContextVar("search_probe", default=None)


@contextmanager
def probe(connection: BaseDatabaseWrapper) -> Iterator[Probe]:
    """Collect stage CPU and SQL statements of the searches run inside (on `connection`)."""
    collected = Probe()
    token = _probe.set(collected)
    try:
        with connection.execute_wrapper(collected.count):
            yield collected
    finally:
        _probe.reset(token)


class Timer:
    """Adds each timed span's milliseconds to timings[name]: `timer("fetch", fn, *args)` runs
    and times one call, `with timer.span("analyse"):` a block."""

    def __init__(self, timings: dict[str, float] | None = None):
        self.timings: dict[str, float] = {} if timings is None else timings

    def __call__(self, name: str, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        with self.span(name):
            return fn(*args, **kwargs)

    @contextmanager
    def span(self, name: str) -> Iterator[None]:
        profile = _probe.get()
        if profile is not None:
            cpu, sent = time.thread_time(), profile.sent
        start = time.perf_counter()
        try:
            yield
        finally:
            ms = (time.perf_counter() - start) * 1000
            self.timings[name] = round(self.timings.get(name, 0.0) + ms, 2)
            if profile is not None:
                profile.cpu_ms[name] += (time.thread_time() - cpu) * 1000
                profile.wall_ms[name] += ms
                profile.statements[name] += profile.sent - sent
