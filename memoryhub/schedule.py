"""The periodic jobs for a server without a broker: the beat schedule of memoryhub/celery.py
as scheduler entries (apps/jobs/scheduler.py). Imported once Django is set up (memoryhub/asgi.py),
since it names the job models and tasks, which the Celery module cannot at import time."""

from __future__ import annotations

from django.conf import settings

from apps.access.tasks import access_cleanup_task
from apps.jobs.models import Job
from apps.jobs.scheduler import Entry, every
from apps.oauth.tasks import oauth_cleartokens_task
from apps.search.tasks import analytics_rollup_task, namespace_changes_prune_task
from apps.transfer.batch_jobs import drain as write_batch_jobs


def server_schedule() -> list:
    """The same work for a server without a broker (apps/jobs/scheduler.py), run by one web
    process: what people look at right after a search or a write (usage counts, near-duplicate
    pairs) every JOBS_RECENT_SECONDS from what changed since the last run, the rest as beat does."""
    recent = settings.JOBS_RECENT_SECONDS
    return [
        Entry(
            "usage",
            recent,
            Job.DECAY,
            options={"recent": True},
            trigger="scheduler-recent",
            quick=True,
        ),
        Entry(
            "near-duplicates-recent",
            recent,
            Job.NEAR_DUPLICATES,
            options={"recent": True},
            trigger="scheduler-recent",
            quick=True,
        ),
        # Previous-turn passages a large write of dialog turns queued (apps/memories/dialog.py).
        Entry("dialog-passages", recent, Job.DIALOG_PASSAGES, trigger="scheduler-recent"),
        # Rows a large batch left outside the HNSW index (apps/vectors/vector_index.py).
        Entry("vector-index", recent, Job.VECTOR_INDEX, trigger="scheduler-recent"),
        # The change log the searches' kept vectors read (apps/memories/namespace_changes.py).
        Entry("namespace-changes", every(minutes=1), call=namespace_changes_prune_task, quick=True),
        Entry("pagerank", every(hours=1), Job.PAGERANK),
        Entry("feedback-weights", every(minutes=15), Job.FEEDBACK_WEIGHTS),
        Entry("decay", every(hours=1), Job.DECAY),
        Entry("reembed", every(minutes=10), Job.REEMBED),
        Entry("near-duplicates", every(days=1), Job.NEAR_DUPLICATES),
        Entry("trash-purge", every(days=1), Job.TRASH_PURGE),
        Entry("analytics-rollup", every(days=1), call=analytics_rollup_task),
        # Bounded tables (docs/operations.md): the same cleanups as beat's.
        # A few DELETEs: quick, so an hour of re-embedding does not hold them up.
        Entry(
            "access-cleanup", settings.ACCESS_CLEANUP_SECONDS, call=access_cleanup_task, quick=True
        ),
        Entry("oauth-cleartokens", every(hours=1), call=oauth_cleartokens_task),
        # Batches a stopped process left half-encoded (a live one wakes its own runner).
        Entry("batch-jobs", every(minutes=1), call=write_batch_jobs),
    ]
