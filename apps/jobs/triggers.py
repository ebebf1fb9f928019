"""Hooks the write path calls (inside transaction.on_commit) when data that background jobs
derive from has changed. Cheap, and never raise: the write has already committed.

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

from django.conf import settings

from apps.jobs.models import Job

logger = logging.getLogger(__name__)


def graph_changed(namespace_id: int) -> None:
    """Causal edges of a namespace were added, changed or removed (PageRank is stale)."""
    _request(Job.PAGERANK, namespace_id)


def feedback_recorded(namespace_id: int) -> None:
    """New search feedback in a namespace (learned strategy weights may be stale)."""
    _request(Job.FEEDBACK_WEIGHTS, namespace_id)


def _eager() -> bool:
    from memoryhub.celery import app

    return bool(app.conf.task_always_eager)


def _request(job: str, namespace_id: int) -> None:
    try:
        if _eager():
            _run_inline(job, namespace_id)
        else:
            _enqueue(job, namespace_id)
    except Exception:
        logger.exception("jobs: could not start %s for namespace %s", job, namespace_id)


def _run_inline(job: str, namespace_id: int) -> None:
    from apps.jobs.services import job_execute
    from apps.memories.models import Memory

    if job == Job.PAGERANK:
        limit = int(getattr(settings, "JOBS_INLINE_MAX_MEMORIES", 2000))
        if Memory.objects.filter(namespace_id=namespace_id).count() > limit:
            logger.info("jobs: namespace %s too large for inline PageRank; skipped", namespace_id)
            return
    job_execute(job, namespace_id=namespace_id, trigger="write")


def _enqueue(job: str, namespace_id: int) -> None:
    from apps.jobs import debounce
    from apps.jobs.tasks import TASKS

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
