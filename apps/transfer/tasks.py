"""Celery task of the transfer app: the runner of kept batches (apps/transfer/batch_jobs.py)."""

from __future__ import annotations

from celery import shared_task

from . import batch_jobs


# The name it had in the memories app: jobs queued in a broker before an upgrade still run.
@shared_task(  # type: ignore[untyped-decorator]  # celery ships no types
    name="apps.memories.tasks.write_batch_jobs_task", ignore_result=True
)
def write_batch_jobs_task() -> int:
    return batch_jobs.drain()
