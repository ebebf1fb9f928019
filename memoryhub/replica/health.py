"""Which database server is up, per process: a server that fails is marked down for a second
(after a probe confirms it does not answer) and probed again when the mark expires."""

from __future__ import annotations

import logging
import threading
import time

import psycopg
from django.db import connections

from .state import current

logger = logging.getLogger(__name__)

# How long a failed server is left alone before the next probe (a refused connect costs ~1 ms;
# a server that does not answer costs one thread a probe timeout, the others skip it). Short,
# so every process notices within a second that the server is back.
DOWN_SECONDS = 1.0
marked_down: dict[str, float] = {}  # alias -> time.monotonic() until which it is left alone
_health_lock = threading.Lock()


def probe(alias: str, timeout: int = 3) -> bool:
    """True when the server behind `alias` accepts a new connection and answers."""
    s = connections[alias].settings_dict
    try:
        with psycopg.connect(
            dbname=s["NAME"],
            user=s["USER"],
            password=s["PASSWORD"],
            host=s["HOST"],
            port=s["PORT"] or None,
            connect_timeout=timeout,
        ) as conn:
            conn.execute("SELECT 1")
        return True
    except Exception:
        return False


def mark_down(alias: str) -> None:
    with _health_lock:
        first = alias not in marked_down
        marked_down[alias] = time.monotonic() + DOWN_SECONDS
    if first:
        logger.warning("database %s is down; routing around it", alias)


def is_up(alias: str) -> bool:
    """False while `alias` is marked down; once its mark expires, a probe decides."""
    until = marked_down.get(alias)
    if until is None:
        return True
    if time.monotonic() < until:
        return False
    if not _health_lock.acquire(blocking=False):
        return False  # another thread is probing: still down until it says otherwise
    try:
        if marked_down.get(alias) != until:  # another thread probed meanwhile
            return alias not in marked_down
        if not probe(alias):
            marked_down[alias] = time.monotonic() + DOWN_SECONDS
            return False
        del marked_down[alias]
    finally:
        _health_lock.release()
    logger.warning("database %s is back", alias)
    # Its pooled connections died with it; a fresh pool connects at once.
    connections[alias].close_pool()
    return True


def connection_failed(alias: str) -> None:
    """Called by the backend when a query or connect on `alias` raised an OperationalError."""
    state = current()
    if state is not None:
        state.failed_alias = alias
        state.avoid.add(alias)
    if alias not in marked_down and not probe(alias):
        mark_down(alias)
