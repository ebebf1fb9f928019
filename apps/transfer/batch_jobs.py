"""Batches too large to write inside their request: kept, written in the background, polled.

A REST or MCP batch of more than MEMORY_BATCH_INLINE_MAX items is checked in full in its request
(a bad item is still a 400 that names it), kept as a BatchJob and answered at once with the job
to poll, so four programs posting 1,000 memories each hold no web slot while they wait and a
search never queues behind them.

One runner per database writes the kept jobs, oldest first (an advisory lock on a connection of
its own elects it). It encodes a job's items in slices, recording after each how many are done,
then stores all of them in one transaction that also marks the job done: a job is stored whole
or not at all, and once, even when its runner stopped half-way and another took it over (the
job's `claim` says which runner may store it). The runner is the Celery worker where there is a
broker, otherwise a thread of the web process that took the job; the server's periodic entry
(memoryhub/schedule.py, beat in memoryhub/celery.py) resumes what a stopped process left.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any

import psycopg
from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import (
    InterfaceError,
    OperationalError,
    close_old_connections,
    connection,
    transaction,
)
from django.utils import timezone

from apps.core.exceptions import ValidationFailed
from apps.memories import revisions
from apps.memories.models import Namespace
from apps.memories.provenance import Origin
from apps.memories.services.create import (
    WriteResult,
    memory_batch_check,
    memory_batch_create,
    memory_batch_embedded,
    memory_batch_store,
)

from .models import BatchJob, BatchState

logger = logging.getLogger(__name__)

# pg_try_advisory_lock(key1, key2) of the runner; far from the jobs app's (namespace, job) keys.
RUNNER_LOCK = (0x6D68, 0x62617463)  # "mh", "batc"
PENDING = (BatchState.QUEUED, BatchState.RUNNING)
KEEP_FINISHED = timedelta(days=7)


def in_background(count: int, asked: bool | None) -> bool:
    """Whether a batch of `count` items goes to the background: as asked, or when it is
    larger than MEMORY_BATCH_INLINE_MAX."""
    return asked if asked is not None else count > settings.MEMORY_BATCH_INLINE_MAX


def write_or_keep(
    *,
    namespace: Namespace,
    items: Sequence[dict[str, Any]],
    on_duplicate: str,
    actor: revisions.Actor,
    door: str,
    background: bool | None,
    origin: Origin | None = None,
) -> BatchJob | list[WriteResult]:
    """What a REST or MCP batch does: write it now (the results) or keep it for the runner
    (the job), by in_background; bounded by MEMORY_BATCH_MAX_CHARS either way."""
    write = submit if in_background(len(items), background) else memory_batch_create
    return write(
        namespace=namespace,
        items=items,
        on_duplicate=on_duplicate,
        actor=actor,
        door=door,
        origin=origin,
        max_chars=settings.MEMORY_BATCH_MAX_CHARS,
    )


def submit(
    *,
    namespace: Namespace,
    items: Sequence[dict[str, Any]],
    on_duplicate: str,
    actor: revisions.Actor,
    door: str,
    max_chars: int | None,
    origin: Origin | None = None,
) -> BatchJob:
    """Check the batch as memory_batch_create would, keep it and wake a runner after commit."""
    memory_batch_check(
        namespace=namespace, items=items, on_duplicate=on_duplicate, max_chars=max_chars
    )
    job = BatchJob.objects.create(
        namespace=namespace,
        door=door,
        origin=origin.to_dict() if origin else {},
        on_duplicate=on_duplicate,
        items=_plain(items),
        total=len(items),
        **_actor_columns(actor),
    )
    transaction.on_commit(wake)
    return job


def _plain(items: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """A JSON copy of the items: a datetime (a door may have parsed created_at) becomes ISO
    text to the microsecond, which the write path reads back as the same instant."""
    copy: list[dict[str, Any]] = json.loads(json.dumps(list(items), default=_json_value))
    return copy


def _json_value(value: object) -> object:
    if isinstance(value, datetime):
        return value.isoformat()
    return DjangoJSONEncoder().default(value)


def _actor_columns(actor: revisions.Actor) -> dict[str, Any]:
    if actor is None or getattr(actor, "pk", None) is None:
        return {}
    column = {"access.ApiToken": "actor_token", "access.OAuthConnection": "actor_connection"}
    return {column.get(actor._meta.label, "actor_user"): actor}


def visible_job(job_id: str, namespaces: Iterable[Namespace]) -> BatchJob | None:
    """The job with this id in one of `namespaces` (a queryset or list of Namespace)."""
    try:
        uuid.UUID(str(job_id))
    except ValueError:
        return None
    return BatchJob.objects.filter(pk=job_id, namespace__in=namespaces).first()


def summary(job: BatchJob) -> dict[str, Any]:
    """What a client polling the job is told (REST adds where to poll, MCP a line of text)."""
    return {
        "id": job.id,
        "namespace": job.namespace.name,
        "state": job.state,
        "total": job.total,
        "done": job.done,
        "rate_per_s": rate(job),
        "created": job.created,
        "already_stored": job.already_stored,
        "queued_at": job.queued_at,
        "started_at": job.started_at,
        "finished_at": job.finished_at,
        "errors": job.errors,
        "results": job.results,
    }


def rate(job: BatchJob) -> float | None:
    """Items a second since the runner started the job."""
    if job.started_at is None:
        return None
    end = job.finished_at or timezone.now()
    return round(job.done / max((end - job.started_at).total_seconds(), 1e-3), 1)


# --- the runner ------------------------------------------------------------------------------

_thread: threading.Thread | None = None
_wanted = False  # a job was kept since this process's runner thread last looked
_thread_guard = threading.Lock()


def wake() -> None:
    """A job was kept: have a runner take it. With a broker the worker runs it; without one
    (or when the broker refuses) a thread of this process, one at a time."""
    from memoryhub.celery import app  # the Celery app imports Django settings at load

    if not app.conf.task_always_eager:
        try:
            app.send_task("apps.memories.tasks.write_batch_jobs_task")
            return
        except Exception as exc:  # Redis down: this process runs it
            logger.warning("batch jobs: could not queue the runner (%s); running here", exc)
    global _thread, _wanted
    with _thread_guard:
        _wanted = True
        if _thread is None:
            _thread = threading.Thread(target=_drain_in_thread, name="batch-jobs", daemon=True)
            _thread.start()


def _drain_in_thread() -> None:
    """Drain until no wake-up came in meanwhile; the thread decides to end under the same lock
    wake() starts one under, so a job kept as it ends is never left to the periodic entry."""
    global _thread, _wanted
    try:
        while True:
            with _thread_guard:
                if not _wanted:
                    _thread = None
                    return
                _wanted = False
            drain()
    except Exception:
        logger.exception("batch jobs: the runner stopped")
        with _thread_guard:
            _thread = None
    finally:
        connection.close()


def drain() -> int:
    """Write pending jobs until none is left; returns how many this call finished. When
    another runner holds the lock, that one writes them and this returns 0 at once."""
    finished = 0
    while True:
        with _runner_lock() as held:
            if not held:
                return finished
            while (job := _claim_next()) is not None:
                finished += _run(job)
        # A job kept while this runner let go of the lock found it held and left: look again.
        if not BatchJob.objects.filter(state=BatchState.QUEUED).exists():
            forget_finished()
            return finished


def forget_finished() -> int:
    """Drop jobs that finished more than KEEP_FINISHED ago (their memories stay, of course):
    a client polls a job for minutes, not weeks."""
    cutoff = timezone.now() - KEEP_FINISHED
    return BatchJob.objects.filter(finished_at__lt=cutoff).delete()[0]


@contextlib.contextmanager
def _runner_lock() -> Iterator[bool]:
    lease = psycopg.connect(**connection.get_connection_params(), autocommit=True)
    try:
        row = lease.execute("SELECT pg_try_advisory_lock(%s, %s)", RUNNER_LOCK).fetchone()
        assert row is not None  # a SELECT without FROM returns its one row
        yield row[0]
    finally:
        lease.close()  # the lock goes with its connection


def _claim_next() -> BatchJob | None:
    """The oldest pending job, claimed by this runner. A job still marked running belongs to
    a runner that stopped: only the lock holder runs jobs."""
    close_old_connections()
    with transaction.atomic():
        job = (
            BatchJob.objects.select_for_update(skip_locked=True)
            .filter(state__in=PENDING)
            .order_by("queued_at")
            .first()
        )
        if job is None:
            return None
        job.claim = uuid.uuid4()
        job.state = BatchState.RUNNING
        job.done = 0
        job.started_at = timezone.now()
        job.save(update_fields=["claim", "state", "done", "started_at"])
    return job


def _run(job: BatchJob) -> int:
    """Encode and store one job; 1 when this runner finished it (done or failed)."""
    started = time.monotonic()
    try:
        batch = memory_batch_embedded(
            namespace=job.namespace,
            items=job.items,
            on_duplicate=job.on_duplicate,
            progress=lambda done, total: _progress(job, done),
        )
        with transaction.atomic():
            held = BatchJob.objects.select_for_update().filter(pk=job.pk, claim=job.claim).first()
            if held is None:  # another runner took it over meanwhile
                return 0
            results = memory_batch_store(
                batch, actor=job.actor, door=job.door, origin=Origin.from_dict(job.origin)
            )
            _finish(held, results)
            job.state = held.state
    except ValidationFailed as exc:  # the namespace changed since the check (a superseded id)
        _fail(job, exc.errors)
    except (OperationalError, InterfaceError):
        logger.warning("batch jobs: database lost during %s; it stays pending", job.pk)
        raise
    except Exception as exc:
        logger.exception("batch jobs: %s failed", job.pk)
        _fail(job, {"items": f"The batch could not be written ({type(exc).__name__})."})
    logger.info(
        "batch jobs: %s %s, %s items in %.1f s",
        job.pk,
        job.state,
        job.total,
        time.monotonic() - started,
    )
    return 1


def _progress(job: BatchJob, done: int) -> None:
    BatchJob.objects.filter(pk=job.pk, claim=job.claim).update(done=done)
    job.done = done


def _finish(job: BatchJob, results: list[WriteResult]) -> None:
    created = sum(1 for r in results if r.created)
    job.results = [r.to_dict() for r in results]
    job.created, job.already_stored = created, len(results) - created
    job.state, job.done, job.finished_at = BatchState.DONE, job.total, timezone.now()
    job.items = []  # stored now; the memories and their revisions hold the texts
    job.save()


def _fail(job: BatchJob, errors: dict[str, Any]) -> None:
    job.state, job.errors, job.finished_at = BatchState.FAILED, errors, timezone.now()
    BatchJob.objects.filter(pk=job.pk, claim=job.claim).update(
        state=job.state, errors=errors, finished_at=job.finished_at
    )
