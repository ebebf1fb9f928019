"""An import started from the browser: the upload is kept on disk and imported in the
background while the page polls its progress.

One run = one uploaded file, read by apps.transfer.importers and written by
transfer.import_records (the same service the import_memories command uses): every record is
checked first and a rejected file writes nothing. The run's state lives in a small JSON file
next to the upload (settings.IMPORT_DIR), replaced atomically, so any web process on the machine
can answer the progress poll while the import's own transaction is still open.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import json
import logging
import os
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.core.files.uploadedfile import UploadedFile
from django.db import close_old_connections, connection

from apps.core.exceptions import ValidationFailed
from apps.memories.models import Namespace
from apps.memories.provenance import Origin

from . import importers
from .transfer import (
    REPEATS_NAMED,
    ImportCancelled,
    ImportStats,
    import_records,
    read_records,
    written_before,
)

log = logging.getLogger(__name__)

RUNNING = ("queued", "reading", "writing")
# A run's `phase` ends as one of: done, failed, cancelled.

# A run's state as saved (start() names its fields): JSON values by field name.
RunState = dict[str, Any]


def _dir() -> Path:
    path = Path(settings.IMPORT_DIR)
    path.mkdir(parents=True, exist_ok=True)
    return path


def _state_path(run_id: str) -> Path:
    return _dir() / f"{run_id}.json"


def _save(state: RunState) -> None:
    path = _state_path(state["id"])
    tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text(json.dumps(state))
    os.replace(tmp, path)


def load(run_id: str) -> RunState | None:
    try:
        uuid.UUID(run_id)
        state: RunState = json.loads(_state_path(run_id).read_text())
        return state
    except (ValueError, OSError):
        return None


def start(
    *,
    upload: UploadedFile,
    namespace: Namespace,
    user: AbstractBaseUser | AnonymousUser,
    fmt: str = "auto",
) -> RunState:
    """Keep the upload and import it in a background thread; returns the run's first state."""
    if upload.size > settings.IMPORT_MAX_BYTES:
        raise ValidationFailed(
            {"file": f"Is {upload.size} bytes; the limit is {settings.IMPORT_MAX_BYTES} bytes."}
        )
    if fmt != "auto" and fmt not in importers.FORMATS:
        raise ValidationFailed(
            {"format": f"Must be auto or one of: {', '.join(importers.FORMATS)}."}
        )
    run_id = str(uuid.uuid4())
    data = _dir() / f"{run_id}.upload"
    with open(data, "wb") as handle:
        for piece in upload.chunks():
            handle.write(piece)
    if fmt == "auto":
        fmt = importers.detect(data, upload.name or "")
    state: RunState = {
        "id": run_id,
        "namespace": namespace.name,
        "user": user.pk,
        "filename": upload.name,
        "format": fmt,
        "format_label": importers.FORMATS[fmt],
        "phase": "queued",
        "done": 0,
        "total": 0,
        "created": 0,
        "skipped": 0,
        "repeated": 0,  # lines repeating an earlier line of the file, skipped
        "repeated_lines": [],  # the first few of them, by label
        "edges": 0,
        "errors": [],
        "error_count": 0,
        "started": time.time(),
        "finished": None,
    }
    _save(state)
    # The thread works on its own copy: the page answered now shows the state as it was saved,
    # not a dict the import is changing while the template renders it.
    worker = threading.Thread(
        target=_run, args=(dict(state), data), name=f"import-{run_id}", daemon=True
    )
    worker.start()
    return state


def _run(state: RunState, data: Path) -> None:
    close_old_connections()
    try:
        namespace = Namespace.objects.get(name=state["namespace"])
        user = get_user_model().objects.filter(pk=state["user"]).first()
        state["phase"] = "reading"
        _save(state)
        labelled = read_records(data, state["format"], namespace=namespace)
        state.update(phase="writing", total=len(labelled))
        _save(state)
        last = [0.0]

        def progress(done: int, total: int) -> None:
            state.update(done=done, total=total)
            now = time.monotonic()
            if now - last[0] >= 0.2 or done == total:
                last[0] = now
                _save(state)

        stats = import_records(
            labelled,
            progress=False,
            actor=user,
            door="ui",
            namespace=namespace,
            on_progress=progress,
            batch_transactions=True,
            should_stop=_cancel_path(state["id"]).exists,
            origin=Origin(import_file=state["filename"] or "", import_format=state["format"]),
        )
        state.update(phase="done", edges=stats.edges, **_counts(stats))
    except ImportCancelled as exc:
        state.update(phase="cancelled", **_counts(exc.stats))
    except ValidationFailed as exc:
        labels = {label for label, _ in locals().get("labelled", [])}
        lines = [problem_line(key, msgs, labels) for key, msgs in exc.errors.items()]
        state.update(phase="failed", errors=lines, error_count=len(lines))
        _count_written(state, exc)
    except Exception as exc:  # reported on the page; the details go to the log
        log.exception("import %s failed", state["id"])
        where = state["filename"] or "file"
        problem = f"{where}: could not be read as {state['format_label']} ({type(exc).__name__})."
        state.update(phase="failed", errors=[problem], error_count=1)
        _count_written(state, exc)
    finally:
        state["finished"] = time.time()
        _save(state)
        data.unlink(missing_ok=True)
        _cancel_path(state["id"]).unlink(missing_ok=True)
        connection.close()
        labelled = []  # noqa: F841  the records go before the memory is given back
        give_memory_back()


def _counts(stats: ImportStats) -> dict[str, Any]:
    return {
        "created": stats.created,
        "skipped": stats.skipped,
        "pending": stats.pending,
        "repeated": len(stats.repeated),
        "repeated_lines": stats.repeated[:REPEATS_NAMED],
    }


def _cancel_path(run_id: str) -> Path:
    return _dir() / f"{run_id}.cancel"


def cancel(run_id: str) -> None:
    """Ask a running import to stop before its next batch (any web process may ask: the mark
    is a file next to the run's state)."""
    uuid.UUID(run_id)
    _cancel_path(run_id).touch()


def _count_written(state: RunState, exc: Exception) -> None:
    """Batches written before a failure stay; the report says how many memories they hold."""
    stats = written_before(exc)
    state["created"] = stats.created if stats else 0


def give_memory_back() -> None:
    """Return what a finished (or failed) import held to the operating system: Python frees the
    objects, but glibc keeps the freed pages of a large import in the process otherwise."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):  # not glibc: nothing to trim
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def problem_line(key: str, messages: list[str], labels: set[str]) -> str:
    """ "line 2.created_at" -> "line 2: created_at: <problem>" (labels may hold dots)."""
    label, field = key, ""
    if key not in labels:
        for i, char in enumerate(key):
            if char == "." and key[:i] in labels:
                label, field = key[:i], key[i + 1 :]
                break
        else:
            if key.startswith("line ") and "." in key:
                label, _, field = key.partition(".")
    text = " ".join(messages)
    return f"{label}: {field}: {text}" if field else f"{label}: {text}"


def rate(state: RunState) -> float:
    """Records per second since the run started."""
    end = state.get("finished") or time.time()
    elapsed: float = max(end - state["started"], 1e-6)
    done: int = state.get("done", 0)
    return done / elapsed
