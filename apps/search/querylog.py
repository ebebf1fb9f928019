"""QueryLog writes: inline by default, or off the hot path.

By default (SEARCH_QUERYLOG_SYNC=True) the row is inserted before search() returns, in one
INSERT that also hands back its id: a query_log_id handed to a client must survive a SIGKILL
of the server, and a queued write does not (a kill test lost 15 of 61 queued rows). With
SEARCH_QUERYLOG_SYNC=False the id is reserved synchronously (one `nextval`, well under a
millisecond) so search() can return `query_log_id` at once; the row itself is inserted by a
single background writer thread shortly after (normally within milliseconds). Inside a
transaction the write is queued with `transaction.on_commit`, so a rolled-back request leaves
no log. `flush()` waits for pending writes (used by evaluate before removing its namespaces,
and at interpreter exit).
"""

from __future__ import annotations

import atexit
import logging
import queue
import threading

from django.db import close_old_connections, connection, transaction

from apps.core.observability import current_request_id

from .models import MissedQueryVector, QueryLog

logger = logging.getLogger(__name__)

_queue: queue.Queue[dict | None] = queue.Queue()
_thread: threading.Thread | None = None
_lock = threading.Lock()


def record(fields: dict, *, sync: bool) -> int:
    """Log one search and return its QueryLog id. `sync`: the row is inserted now and its id
    comes back from that one INSERT (durable before the client sees it); otherwise the id is
    reserved with `nextval` and the row queued for the writer thread."""
    if sync:
        fields.setdefault("request_id", current_request_id() or "")
        return _write(fields)
    fields["id"] = reserve_id()
    submit(fields)
    return fields["id"]


def reserve_id() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, 'id'))", [QueryLog._meta.db_table]
        )
        return int(cursor.fetchone()[0])


def _write(fields: dict) -> int:
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
    while True:
        fields = _queue.get()
        try:
            if fields is None:
                return
            close_old_connections()
            _write(fields)
        except Exception:  # a lost log must never break searching
            logger.exception("could not write QueryLog %s", fields.get("id") if fields else None)
        finally:
            _queue.task_done()


def _ensure_thread() -> None:
    global _thread
    with _lock:
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_worker, name="querylog-writer", daemon=True)
            _thread.start()


def submit(fields: dict, *, sync: bool = False) -> None:
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
