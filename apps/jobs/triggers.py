"""Asking for a job run after a write (the owning apps call `job_requested` inside
transaction.on_commit, e.g. apps.memories.jobs.graph_changed). Cheap, and never raises: the
write has already committed.

With a broker, the job is queued debounced (see debounce.py): a burst of edge edits in a
namespace becomes one PageRank run JOBS_DEBOUNCE_SECONDS (default 10) later.

Without a broker (eager mode, `make run` alone) there is no worker to queue for, so the job runs
inline, after the commit: feedback weights always (bounded work: at most the latest 100 entries
per strategy), PageRank only while the namespace has at most JOBS_INLINE_MAX_MEMORIES (default
2000) memories, which keeps it to a few tens of milliseconds. Larger namespaces keep their scores
until `manage.py run_job pagerank` (or a worker) recomputes them.
"""

from __future__ import annotations

import logging

logger = logging.getLogger(__name__)


def _eager() -> bool:
    from memoryhub.celery import app

    return bool(app.conf.task_always_eager)


def job_requested(job: str, namespace_id: int) -> None:
    """Data `job` derives from changed in a namespace: queue it (debounced) or run it now."""
    try:
        if _eager():
            _run_inline(job, namespace_id)
        else:
            _enqueue(job, namespace_id)
    except Exception as exc:
        if _eager():
            logger.exception("jobs: could not start %s for namespace %s", job, namespace_id)
        else:  # the broker refused it (Redis down): keep the request in the database
            logger.warning("jobs: could not queue %s for namespace %s: %s", job, namespace_id, exc)
            _remember(job, namespace_id)


def _remember(job: str, namespace_id: int) -> None:
    """The broker refused the job: keep the request in the database for drain_requests()."""
    from apps.jobs.models import JobRequest

    try:
        JobRequest.objects.update_or_create(job=job, namespace_id=namespace_id)
        logger.warning("jobs: %s for namespace %s kept until the broker is back", job, namespace_id)
    except Exception:
        logger.exception("jobs: could not keep %s for namespace %s", job, namespace_id)


def drain_requests(limit: int = 500) -> int:
    """Queue the job runs writes asked for while the broker was down (beat runs this every
    minute). A row leaves only when its run is queued (or one is already pending), so each
    request becomes exactly one run."""
    from django.db import transaction

    from apps.jobs.models import JobRequest

    with transaction.atomic():
        rows = list(JobRequest.objects.select_for_update(skip_locked=True)[:limit])
        for row in rows:
            _enqueue(row.job, row.namespace_id)  # raises while the broker is still down
        JobRequest.objects.filter(pk__in=[r.pk for r in rows]).delete()
    if rows:
        logger.info("jobs: queued %d job runs requested while the broker was down", len(rows))
    return len(rows)


def _run_inline(job: str, namespace_id: int) -> None:
    from apps.jobs.services import RUN_INLINE, job_execute

    allowed = RUN_INLINE.get(job)
    if allowed is not None and not allowed(namespace_id):
        logger.info("jobs: namespace %s too large for inline %s; skipped", namespace_id, job)
        return
    job_execute(job, namespace_id=namespace_id, trigger="write")


def _enqueue(job: str, namespace_id: int) -> None:
    from apps.jobs import debounce
    from apps.jobs.tasks import TASKS

    if not debounce.broker_reachable():
        raise ConnectionError("the Celery broker (Redis) does not answer")
    countdown = debounce.delay_seconds()
    if not debounce.claim(job, namespace_id, countdown):
        return  # a run is already queued and has not started reading yet
    try:
        TASKS[job].apply_async(
            kwargs={"namespace_id": namespace_id, "trigger": "write"}, countdown=countdown
        )
    except Exception:
        debounce.release(job, namespace_id)  # let the next change try again
        raise
