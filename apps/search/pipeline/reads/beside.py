"""A read that runs beside the search's own: in a helper thread on a connection of its own,
so PostgreSQL works on two statements of one search at once (on two cores) instead of one
after the other.

Only outside a transaction: a search inside one (a test's, a caller's atomic block) must read
what that transaction sees, so there the read simply runs now, on the caller's connection.
The helper thread carries the caller's context (the read routing of memoryhub/replica/
lives in context variables) and gives its connection back to the pool after each read.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from typing import Any, TypeVar

from django.conf import settings
from django.db import connections

from memoryhub.replica.routing import read_connection

T = TypeVar("T")

# Enough for the searches one web process admits at once (memoryhub/admission.py) and a few
# from the MCP threads; a read waiting for a thread still runs, only later.
THREADS = 4


def beside(fn: Callable[..., T], *args: Any, **kwargs: Any) -> Callable[[], T]:
    """Start `fn(*args, **kwargs)`; calling the result waits for its value (or raises its
    error)."""
    if read_connection.in_atomic_block or not settings.SEARCH_PARALLEL_READS:
        value = fn(*args, **kwargs)
        return lambda: value
    context = contextvars.copy_context()
    future = _threads().submit(context.run, _on_own_connection, fn, *args, **kwargs)
    return future.result


@cache
def _threads() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(THREADS, thread_name_prefix="search-read")


def _on_own_connection(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    try:
        return fn(*args, **kwargs)
    finally:
        for connection in connections.all(initialized_only=True):
            connection.close()  # back to the pool (or closed, without one)
