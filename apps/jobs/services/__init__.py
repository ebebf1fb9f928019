"""Run a job and record it. Each job is a function (namespace, **options) -> changes dict,
registered by the app it serves (apps.memories.jobs, apps.search.jobs) when that app is ready.

`job_execute` is what tasks, triggers, the `run_job` command and the admin call: it writes a
JobRun row (outside the job's transaction, so failures are recorded too), holds the
(job, namespace) advisory lock around each namespace's work, and adds up what changed.
"""

from __future__ import annotations

import os
import socket
import time
import traceback
from collections.abc import Callable

from django.utils import timezone

from apps.core import metrics
from apps.jobs.locks import advisory_lock
from apps.jobs.models import JobRun, RunStatus, namespace_model

JobBody = Callable[..., dict]

JOBS: dict[str, JobBody] = {}
# job -> (namespace id -> whether it may run inline after a write when there is no worker).
RUN_INLINE: dict[str, Callable[[int], bool]] = {}
KEEP_RUNS_PER_JOB = 500
MAX_NAMESPACES_LISTED = 50


def register_job(
    name: str, body: JobBody, *, run_inline: Callable[[int], bool] | None = None
) -> None:
    """Make `body` the job `name` (called by the owning app's ready())."""
    JOBS[name] = body
    if run_inline is not None:
        RUN_INLINE[name] = run_inline


def job_execute(
    job: str,
    *,
    namespace_id: int | None = None,
    trigger: str = "manual",
    task_id: str = "",
    **options,
) -> JobRun:
    """Run `job` over one namespace (or all) now, in this process; returns the finished JobRun.

    Raises whatever the job raised, after recording it on the JobRun.
    """
    fn = JOBS[job]
    Namespace = namespace_model()
    if namespace_id is not None and not Namespace.objects.filter(pk=namespace_id).exists():
        # Deleted while its debounced run waited in the queue: nothing to do, nothing to record.
        return JobRun(
            job=job, trigger=trigger, status=RunStatus.SUCCEEDED, changes={"namespaces": 0}
        )
    run = JobRun.objects.create(
        job=job,
        namespace_id=namespace_id,
        trigger=trigger,
        started_at=timezone.now(),
        task_id=task_id or "",
        worker=f"{socket.gethostname()}:{os.getpid()}",
    )
    started = time.perf_counter()
    totals: dict = {"namespaces": 0}
    per_namespace: dict[str, dict] = {}
    try:
        namespaces = Namespace.objects.order_by("id")
        if namespace_id is not None:
            namespaces = namespaces.filter(pk=namespace_id)
        for namespace in namespaces:
            with advisory_lock(job, namespace.pk):
                changes = fn(namespace=namespace, **options)
            totals["namespaces"] += 1
            _add(totals, changes)
            if len(per_namespace) < MAX_NAMESPACES_LISTED:
                per_namespace[namespace.name] = changes
    except Exception:
        _finish(run, started, RunStatus.FAILED, totals, per_namespace, traceback.format_exc())
        raise
    _finish(run, started, RunStatus.SUCCEEDED, totals, per_namespace, "")
    return run


def _add(totals: dict, changes: dict) -> None:
    for key, value in changes.items():
        if (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and key != "mean_stability"
        ):
            totals[key] = totals.get(key, 0) + value


def _finish(run, started, status, totals, per_namespace, error) -> None:
    run.status = status
    run.finished_at = timezone.now()
    run.duration_ms = round((time.perf_counter() - started) * 1000, 1)
    run.changes = {**totals, "per_namespace": per_namespace}
    run.error = error[-20_000:]
    fields = ["status", "finished_at", "duration_ms", "changes", "error"]
    # update(), not save(): the row may be gone if its namespace was deleted meanwhile.
    JobRun.objects.filter(pk=run.pk).update(**{f: getattr(run, f) for f in fields})
    metrics.observe_job(run.job, status)
    _prune(run.job)


def _prune(job: str) -> None:
    """Keep the history bounded: the latest KEEP_RUNS_PER_JOB runs of each job."""
    cutoff = (
        JobRun.objects.filter(job=job)
        .order_by("-started_at", "-id")
        .values_list("started_at", flat=True)[KEEP_RUNS_PER_JOB : KEEP_RUNS_PER_JOB + 1]
    )
    if cutoff:
        JobRun.objects.filter(job=job, started_at__lt=cutoff[0]).delete()


def run_summary(run: JobRun) -> dict:
    """What tasks return and the command prints (JSON-safe)."""
    return {
        "run_id": run.pk,
        "job": run.job,
        "namespace_id": run.namespace_id,
        "status": run.status,
        "duration_ms": run.duration_ms,
        "changes": run.changes,
        "error": run.error,
    }
