"""Warm start: a server process is "starting" until its warm-up has run, then "ready".

A server (memoryhub.asgi, `manage.py mcp_stdio`) calls `start(warm)` once at import; the
warm-up runs in a background thread so the socket is already answering /healthz with
"starting" (503) meanwhile. A process that never calls `start` (the test client, a management
command, WSGI) has nothing to wait for and counts as ready.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

logger = logging.getLogger(__name__)

_started = threading.Event()
_done = threading.Event()
_lock = threading.Lock()
_elapsed_s: float | None = None


def start(warm: Callable[[], None]) -> None:
    """Run `warm` once in a daemon thread; later calls do nothing."""
    with _lock:
        if _started.is_set():
            return
        _started.set()
    threading.Thread(target=_run, args=(warm,), name="warm-up", daemon=True).start()


def _run(warm: Callable[[], None]) -> None:
    global _elapsed_s
    began = time.perf_counter()
    try:
        warm()
    except Exception:  # a failed warm-up must not keep the server "starting" forever
        logger.exception("warm-up failed; serving cold")
    finally:
        _elapsed_s = time.perf_counter() - began
        logger.info("warm-up finished in %.1f s", _elapsed_s)
        _done.set()


def is_ready() -> bool:
    return _done.is_set() or not _started.is_set()


def wait(timeout: float | None = None) -> bool:
    """Block until ready (for the stdio server and tests); True when ready."""
    return is_ready() or _done.wait(timeout)
