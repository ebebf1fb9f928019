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
# periodic runs catch what no write signalled (deleted isolated memories, lost messages).
_BEAT = {"kwargs": {"trigger": "beat"}}
app.conf.beat_schedule = {
    # Job runs that writes asked for while Redis was down (apps/jobs/triggers.py).
    "drain-job-requests": {
        "task": "apps.jobs.tasks.drain_job_requests_task",
        "schedule": float(os.environ.get("JOBS_DRAIN_SECONDS", "60")),
    },
    "pagerank-hourly": {
        "task": "apps.jobs.tasks.pagerank_task",
        "schedule": crontab(minute=5),
        **_BEAT,
    },
    "feedback-weights-every-15-min": {
        "task": "apps.jobs.tasks.feedback_weights_task",
        "schedule": 15 * 60.0,
        **_BEAT,
    },
    "decay-hourly": {"task": "apps.jobs.tasks.decay_task", "schedule": crontab(minute=35), **_BEAT},
    "reembed-every-10-min": {
        "task": "apps.jobs.tasks.reembed_task",
        "schedule": 10 * 60.0,
        **_BEAT,
    },
    "trash-purge-daily": {
        "task": "apps.jobs.tasks.trash_purge_task",
        "schedule": crontab(hour=3, minute=15),
        **_BEAT,
    },
    # The analytics page's daily roll-up of the search log, once yesterday is closed.
    "analytics-rollup-daily": {
        "task": "apps.search.tasks.analytics_rollup_task",
        "schedule": crontab(hour=0, minute=20),
    },
    "near-duplicates-daily": {
        "task": "apps.jobs.tasks.near_duplicates_task",
        "schedule": crontab(hour=3, minute=45),
        **_BEAT,
    },
}


def server_schedule() -> list:
    """The same work for a server without a broker (apps/jobs/scheduler.py), run by one web
    process: what people look at right after a search or a write (usage counts, near-duplicate
    pairs) every JOBS_RECENT_SECONDS from what changed since the last run, the rest as above."""
    from django.conf import settings

    from apps.jobs.models import Job
    from apps.jobs.scheduler import Entry, every
    from apps.search.tasks import analytics_rollup_task

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
        Entry("pagerank", every(hours=1), Job.PAGERANK),
        Entry("feedback-weights", every(minutes=15), Job.FEEDBACK_WEIGHTS),
        Entry("decay", every(hours=1), Job.DECAY),
        Entry("reembed", every(minutes=10), Job.REEMBED),
        Entry("near-duplicates", every(days=1), Job.NEAR_DUPLICATES),
        Entry("trash-purge", every(days=1), Job.TRASH_PURGE),
        Entry("analytics-rollup", every(days=1), call=analytics_rollup_task),
    ]
