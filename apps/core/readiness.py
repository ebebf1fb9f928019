"""Warm start: a server process is "starting" until its warm-up has run, then "ready".

A server (memoryhub.asgi, `manage.py mcp_stdio`) calls `start(warm)` once at import; the
warm-up runs in a background thread so the socket is already answering /healthz with
"starting" (503) meanwhile. A process that never calls `start` (the test client, a management
command, WSGI) has nothing to wait for and counts as ready.

Under `uvicorn --workers N` every worker warms itself, and whichever worker accepts a
connection answers it: one warm worker saying "ok" while its sibling still warms would send
the first searches to a cold process. So the workers of one supervisor register in
VAR_DIR/run/workers-<supervisor pid>/ (one file per worker: "starting" or "ready"), and a
worker reports ready only when every live sibling does too.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import multiprocessing
import os
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path

from django.conf import settings

logger = logging.getLogger(__name__)

_started = threading.Event()
_done = threading.Event()
_lock = threading.Lock()
_elapsed_s: float | None = None
_group: Path | None = None


def register() -> None:
    """Announce this worker to its siblings as "starting" (as early as possible, so a fast
    sibling cannot finish its warm-up before this one is known). Only in a worker process
    that a supervisor (uvicorn --workers) spawned; elsewhere nothing to do."""
    global _group
    parent = multiprocessing.parent_process()
    if parent is None or _group is not None:
        return
    run = Path(settings.VAR_DIR) / "run"
    _group = run / f"workers-{parent.pid}"
    with contextlib.suppress(OSError):
        for stale in run.glob("workers-*"):  # groups of supervisors that are gone
            if not _alive(int(stale.name.rsplit("-", 1)[1])):
                shutil.rmtree(stale, ignore_errors=True)
        _group.mkdir(parents=True, exist_ok=True)
        _mark("starting")
        atexit.register(_unregister)


def start(warm: Callable[[], None]) -> None:
    """Run `warm` once in a daemon thread; later calls do nothing."""
    with _lock:
        if _started.is_set():
            return
        _started.set()
    register()
    logger.info("warming up (model, parsers, database); /healthz answers 503 until ready")
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
        _mark("ready")


def is_ready() -> bool:
    """This process has warmed up, and so has every live sibling worker."""
    if not _started.is_set():
        return True
    return _done.is_set() and (_group is None or siblings_ready(_group, os.getpid()))


def siblings_ready(group: Path, me: int) -> bool:
    """Whether every live worker registered in `group` other than `me` says "ready"."""
    try:
        entries = list(group.iterdir())
    except OSError:
        return True
    for entry in entries:
        if not entry.name.isdigit() or int(entry.name) == me or not _alive(int(entry.name)):
            continue
        with contextlib.suppress(OSError):
            if entry.read_text() != "ready":
                return False
    return True


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _mark(state: str) -> None:
    if _group is not None:
        with contextlib.suppress(OSError):
            (_group / str(os.getpid())).write_text(state)


def _unregister() -> None:
    if _group is not None:
        with contextlib.suppress(OSError):
            (_group / str(os.getpid())).unlink()


def wait(timeout: float | None = None) -> bool:
    """Block until ready (for the stdio server and tests); True when ready."""
    return is_ready() or _done.wait(timeout)
