"""Reads of job run records for the interfaces (the analytics page)."""

from __future__ import annotations

from django.conf import settings
from django.db.models import Q

from .models import JobRun
from .scheduler import enabled


def latest_runs(*, namespace_id: int) -> list[JobRun]:
    """The last run of each job that covered this namespace (run for it, or for all
    namespaces): one row per job, newest first (DISTINCT ON job over the job/started index)."""
    runs = (
        JobRun.objects.filter(Q(namespace_id=namespace_id) | Q(namespace__isnull=True))
        .order_by("job", "-started_at", "-id")
        .distinct("job")
        .defer("error", "changes")
    )
    return sorted(runs, key=lambda run: run.started_at, reverse=True)


def jobs_state() -> dict:
    """For /healthz: who runs the periodic jobs, and when each job last ran (any scope)."""
    runs = (
        JobRun.objects.order_by("job", "-started_at", "-id")
        .distinct("job")
        .only("job", "started_at", "status", "trigger", "duration_ms")
    )
    if enabled():
        runner = "this server (no broker)"
    elif settings.CELERY_BROKER_URL:
        runner = "celery worker and beat"
    else:
        runner = "none (JOBS_SCHEDULER=off)"
    return {
        "runner": runner,
        "broker": bool(settings.CELERY_BROKER_URL),
        "last_runs": {
            run.job: {
                "started_at": run.started_at.isoformat(),
                "status": run.status,
                "trigger": run.trigger,
                "duration_ms": run.duration_ms,
            }
            for run in runs
        },
    }
