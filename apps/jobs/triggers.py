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

from apps.jobs.models import JobRequest
from apps.jobs.services import RUN_INLINE, job_execute
from apps.jobs.tasks import drain_requests, enqueue
from memoryhub.celery import app

__all__ = ["drain_requests", "hold_requests_in_database", "job_requested"]

logger = logging.getLogger(__name__)


# Set in a forked worker process (parallel import): its job requests wait in the database and
# the parent queues them, since the broker connections it inherited belong to the parent.
_held = False


def hold_requests_in_database() -> None:
    global _held
    _held = True


def _eager() -> bool:
    return bool(app.conf.task_always_eager)


def job_requested(job: str, namespace_id: int) -> None:
    """Data `job` derives from changed in a namespace: queue it (debounced) or run it now."""
    try:
        if _eager():
            _run_inline(job, namespace_id)
        elif _held:
            JobRequest.objects.update_or_create(job=job, namespace_id=namespace_id)
        else:
            enqueue(job, namespace_id)
    except Exception as exc:
        if _eager():
            logger.exception("jobs: could not start %s for namespace %s", job, namespace_id)
        else:  # the broker refused it (Redis down): keep the request in the database
            logger.warning("jobs: could not queue %s for namespace %s: %s", job, namespace_id, exc)
            _remember(job, namespace_id)


def _remember(job: str, namespace_id: int) -> None:
    """The broker refused the job: keep the request in the database for drain_requests()."""
    try:
        JobRequest.objects.update_or_create(job=job, namespace_id=namespace_id)
        logger.warning("jobs: %s for namespace %s kept until the broker is back", job, namespace_id)
    except Exception:
        logger.exception("jobs: could not keep %s for namespace %s", job, namespace_id)


def _run_inline(job: str, namespace_id: int) -> None:
    allowed = RUN_INLINE.get(job)
    if allowed is not None and not allowed(namespace_id):
        logger.debug(
            "jobs: %s for namespace %s is not run after the write; a worker or the server's "
            "scheduler runs it",
            job,
            namespace_id,
        )
        return
    job_execute(job, namespace_id=namespace_id, trigger="write")
