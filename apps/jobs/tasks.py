"""Celery tasks: take ids, call job_execute, retry on lost database connections."""

from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError

from apps.jobs import debounce
from apps.jobs.models import Job
from apps.jobs.services import job_execute, run_summary

RETRY = {
    "bind": True,
    "autoretry_for": (OperationalError, InterfaceError),
    "retry_backoff": True,
    "max_retries": 3,
    "acks_late": True,
}


def _run(task, job: str, namespace_id: int | None, trigger: str) -> dict:
    debounce.release(job, namespace_id)
    run = job_execute(
        job, namespace_id=namespace_id, trigger=trigger, task_id=task.request.id or ""
    )
    return run_summary(run)


@shared_task(**RETRY)
def pagerank_task(self, namespace_id: int | None = None, trigger: str = "beat") -> dict:
    return _run(self, Job.PAGERANK, namespace_id, trigger)


@shared_task(**RETRY)
def feedback_weights_task(self, namespace_id: int | None = None, trigger: str = "beat") -> dict:
    return _run(self, Job.FEEDBACK_WEIGHTS, namespace_id, trigger)


@shared_task(**RETRY)
def decay_task(self, namespace_id: int | None = None, trigger: str = "beat") -> dict:
    return _run(self, Job.DECAY, namespace_id, trigger)


@shared_task(**RETRY)
def reembed_task(self, namespace_id: int | None = None, trigger: str = "beat") -> dict:
    return _run(self, Job.REEMBED, namespace_id, trigger)


@shared_task(**RETRY)
def trash_purge_task(self, namespace_id: int | None = None, trigger: str = "beat") -> dict:
    return _run(self, Job.TRASH_PURGE, namespace_id, trigger)


@shared_task(**RETRY)
def near_duplicates_task(self, namespace_id: int | None = None, trigger: str = "beat") -> dict:
    return _run(self, Job.NEAR_DUPLICATES, namespace_id, trigger)


@shared_task
def drain_job_requests_task() -> int:
    """Queue the runs writes asked for while the broker was down (apps.jobs.triggers)."""
    from apps.jobs.triggers import drain_requests

    return drain_requests()


TASKS = {
    Job.PAGERANK: pagerank_task,
    Job.FEEDBACK_WEIGHTS: feedback_weights_task,
    Job.DECAY: decay_task,
    Job.REEMBED: reembed_task,
    Job.TRASH_PURGE: trash_purge_task,
    Job.NEAR_DUPLICATES: near_duplicates_task,
}
