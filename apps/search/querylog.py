"""QueryLog writes: off the hot path by default, or inline.

With SEARCH_QUERYLOG_SYNC=False (the default) the id is reserved synchronously, from a block
of ids the process reserves with one statement now and then, so search() can return
`query_log_id` at once; the row itself is inserted by a single background writer thread
shortly after (normally within milliseconds). Inside a transaction the write is queued with
`transaction.on_commit`, so a rolled-back request leaves no log. With True the row is
inserted before search() returns, in one INSERT that also hands back its id: a query_log_id
handed to a client then survives a SIGKILL of the server, and a queued write does not (a kill
test lost 15 of 61 queued rows). `flush()` waits for pending writes (used by evaluate before
removing its namespaces, and at interpreter exit).
"""

from __future__ import annotations

import atexit
import logging
import os
import queue
import threading
from typing import Any

from django.conf import settings
from django.db import connection, connections, transaction

from apps.core.observability import current_request_id

from .models import MissedQueryVector, QueryLog

logger = logging.getLogger(__name__)

_queue: queue.Queue[dict[str, Any] | None] = queue.Queue()
_thread: threading.Thread | None = None
_lock = threading.Lock()


def record(fields: dict[str, Any], *, sync: bool) -> int:
    """Log one search and return its QueryLog id. `sync`: the row is inserted now and its id
    comes back from that one INSERT (durable before the client sees it); otherwise the id is
    reserved with `nextval` and the row queued for the writer thread."""
    if sync:
        fields.setdefault("request_id", current_request_id() or "")
        return _write(fields)
    fields["id"] = reserve_id()
    submit(fields)
    return int(fields["id"])


# Ids are reserved this many at a time: one round trip to the primary per block rather than
# one per search. A process that ends leaves the rest of its block unused (gaps in the ids).
ID_BLOCK = 32
_reserved: list[int] = []
_reserved_lock = threading.Lock()


def reserve_id() -> int:
    with _reserved_lock:
        if not _reserved:
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)",
                    [QueryLog._meta.db_table, ID_BLOCK],
                )
                _reserved.extend(sorted((int(r[0]) for r in cursor.fetchall()), reverse=True))
        return _reserved.pop()


def _forget_after_fork() -> None:
    """A forked child must not hand out the ids its parent holds (both would use them)."""
    global _reserved_lock
    _reserved.clear()
    _reserved_lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_after_fork)


def _write(fields: dict[str, Any]) -> int:
    vector = fields.pop("missed_vector", None)
    log = QueryLog.objects.create(**fields)
    if vector is not None:  # the missed-searches queue groups these by meaning
        key = log.query.strip(" ").lower()
        if key:
            MissedQueryVector.objects.bulk_create(
                [MissedQueryVector(namespace_id=log.namespace_id, query_key=key, embedding=vector)],
                ignore_conflicts=True,
            )
    return log.pk


def _worker() -> None:
    """Writes the queued rows one by one. The writer keeps its (pooled) connection while rows
    keep coming and gives it back once none has come for SEARCH_QUERYLOG_IDLE_RELEASE_S (0:
    as soon as the queue is empty): taking a connection from the pool and giving it back for
    every row cost about as much as the INSERT itself."""
    holding = False
    while True:
        idle = float(settings.SEARCH_QUERYLOG_IDLE_RELEASE_S)
        if holding and idle <= 0 and _queue.empty():
            holding = _release()
        try:
            fields = _queue.get(timeout=max(idle, 0.0) if holding else None)
        except queue.Empty:  # idle for a while: the connection goes back
            holding = _release()
            continue
        try:
            if fields is None:
                _release()
                return
            _write(fields)
            holding = True
        except Exception:  # a lost log must never break searching
            logger.exception("could not write QueryLog %s", fields.get("id") if fields else None)
            holding = _release()  # a broken connection is not used for the next row
        finally:
            _queue.task_done()


def _release() -> bool:
    """Give the writer thread's connections back (to the pool, or closed without one); False,
    for `holding`."""
    for wrapper in connections.all(initialized_only=True):
        if wrapper.connection is not None:
            try:
                wrapper.close()
            except Exception:  # a connection that broke is gone either way
                logger.debug("closing the query log writer's connection failed", exc_info=True)
    return False


def _ensure_thread() -> None:
    global _thread
    with _lock:
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_worker, name="querylog-writer", daemon=True)
            _thread.start()


def submit(fields: dict[str, Any], *, sync: bool = False) -> None:
    """Queue one QueryLog row for the writer thread (after the commit when inside a
    transaction); `sync` (SEARCH_QUERYLOG_SYNC, for tests) writes it now."""
    # Read here, in the caller's context: the writer thread has no request.
    fields.setdefault("request_id", current_request_id() or "")
    if sync:
        _write(fields)
        return

    def enqueue() -> None:
        _ensure_thread()
        _queue.put(fields)

    if connection.in_atomic_block:
        transaction.on_commit(enqueue)
    else:
        enqueue()


def flush() -> None:
    """Block until every queued QueryLog is written."""
    if _thread is not None and _thread.is_alive():
        _queue.join()


atexit.register(flush)
