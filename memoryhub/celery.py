"""The Celery app. With CELERY_BROKER_URL unset, tasks run eagerly in-process.

`celery -A memoryhub worker -B` runs a worker with the beat scheduler embedded (one machine);
in a deployment run one `celery -A memoryhub beat` and any number of workers.
"""

from __future__ import annotations

import os

from celery import Celery
from celery.schedules import crontab

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings.base")

app = Celery("memoryhub")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# Periodic jobs (docs/jobs.md). Writes also queue PageRank and feedback weights, debounced; the
# periodic runs catch what no write signalled (deleted isolated memories, lost messages). Every
# job runs through the one task apps.jobs.tasks.run_job_task, named by its kwargs.
_RUN_JOB = "apps.jobs.tasks.run_job_task"


def _job(name: str, schedule) -> dict:
    return {"task": _RUN_JOB, "schedule": schedule, "kwargs": {"job": name, "trigger": "beat"}}


app.conf.beat_schedule = {
    # Job runs that writes asked for while Redis was down (apps/jobs/triggers.py).
    "drain-job-requests": {
        "task": "apps.jobs.tasks.drain_job_requests_task",
        "schedule": float(os.environ.get("JOBS_DRAIN_SECONDS", "60")),
    },
    # Turns whose previous-turn passages a large write queued while Redis was down, or whose
    # run stopped (a write asks for a run itself: apps/memories/dialog.py).
    "dialog-passages-every-minute": _job("dialog_passages", 60.0),
    # Rows a large batch left outside the HNSW index, when the write's own request was lost.
    "vector-index-every-minute": _job("vector_index", 60.0),
    # The change log the searches' kept vectors read (apps/memories/namespace_changes.py).
    "namespace-changes-prune-every-minute": {
        "task": "apps.search.tasks.namespace_changes_prune_task",
        "schedule": 60.0,
    },
    "pagerank-hourly": _job("pagerank", crontab(minute=5)),
    "feedback-weights-every-15-min": _job("feedback_weights", 15 * 60.0),
    "decay-hourly": _job("decay", crontab(minute=35)),
    "reembed-every-10-min": _job("reembed", 10 * 60.0),
    "trash-purge-daily": _job("trash_purge", crontab(hour=3, minute=15)),
    # The analytics page's daily roll-up of the search log, once yesterday is closed.
    "analytics-rollup-daily": {
        "task": "apps.search.tasks.analytics_rollup_task",
        "schedule": crontab(hour=0, minute=20),
    },
    "near-duplicates-daily": _job("near_duplicates", crontab(hour=3, minute=45)),
    # Rate counters of finished windows, login attempts past their bound (apps/access/cleanup.py)
    # and expired OAuth grants and tokens (DOT's cleartokens): bounded tables, docs/operations.md.
    "access-cleanup": {
        "task": "apps.access.tasks.access_cleanup_task",
        "schedule": float(os.environ.get("ACCESS_CLEANUP_SECONDS", "300")),
    },
    "oauth-cleartokens-hourly": {
        "task": "apps.oauth.tasks.oauth_cleartokens_task",
        "schedule": crontab(minute=50),
    },
    # Batches kept for the background whose runner stopped (apps/transfer/batch_jobs.py).
    "batch-jobs-every-minute": {
        "task": "apps.memories.tasks.write_batch_jobs_task",
        "schedule": 60.0,
    },
}
