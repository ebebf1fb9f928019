"""Celery task of the memories app: the runner of kept batches (apps/memories/batch_jobs.py)."""

from __future__ import annotations

from celery import shared_task

from . import batch_jobs


@shared_task(name="apps.memories.tasks.write_batch_jobs_task", ignore_result=True)
def write_batch_jobs_task() -> int:
    return batch_jobs.drain()
