"""Reads of job run records for the interfaces (the analytics page)."""

from __future__ import annotations

from django.db.models import Q

from .models import JobRun


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
