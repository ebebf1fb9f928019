"""Celery tasks: one task runs any registered job by name (retrying on lost database
connections), one drains the runs writes asked for while the broker was down. Queueing a run,
debounced, lives here too, so the write-side triggers depend on the tasks and never the reverse."""

from __future__ import annotations

import logging

from celery import shared_task
from django.db import InterfaceError, OperationalError, transaction

from apps.jobs import debounce
from apps.jobs.models import JobRequest
from apps.jobs.services import job_execute, run_summary

logger = logging.getLogger(__name__)


@shared_task(
    bind=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    max_retries=3,
    acks_late=True,
)
def run_job_task(self, job: str, namespace_id: int | None = None, trigger: str = "beat") -> dict:
    """Run `job` (one of apps.jobs.models.Job) for a namespace, or for all with None."""
    debounce.release(job, namespace_id)
    run = job_execute(
        job, namespace_id=namespace_id, trigger=trigger, task_id=self.request.id or ""
    )
    return run_summary(run)


def enqueue(job: str, namespace_id: int) -> None:
    """Queue a write-triggered run, debounced: a burst of changes in a namespace becomes one run
    JOBS_DEBOUNCE_SECONDS later. Raises ConnectionError while the broker does not answer."""
    if not debounce.broker_reachable():
        raise ConnectionError("the Celery broker (Redis) does not answer")
    countdown = debounce.delay_seconds()
    if not debounce.claim(job, namespace_id, countdown):
        return  # a run is already queued and has not started reading yet
    try:
        run_job_task.apply_async(
            kwargs={"job": job, "namespace_id": namespace_id, "trigger": "write"},
            countdown=countdown,
        )
    except Exception:
        debounce.release(job, namespace_id)  # let the next change try again
        raise


def drain_requests(limit: int = 500) -> int:
    """Queue the job runs writes asked for while the broker was down (beat runs this every
    minute). A row leaves only when its run is queued (or one is already pending), so each
    request becomes exactly one run."""
    with transaction.atomic():
        rows = list(JobRequest.objects.select_for_update(skip_locked=True)[:limit])
        for row in rows:
            enqueue(row.job, row.namespace_id)  # raises while the broker is still down
        JobRequest.objects.filter(pk__in=[r.pk for r in rows]).delete()
    if rows:
        logger.info("jobs: queued %d job runs requested while the broker was down", len(rows))
    return len(rows)


@shared_task
def drain_job_requests_task() -> int:
    """Queue the runs writes asked for while the broker was down (apps.jobs.triggers)."""
    return drain_requests()
