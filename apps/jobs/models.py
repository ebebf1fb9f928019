"""A record of every background job run, shown in the admin (SPEC section 6).

The jobs app is infrastructure: it imports no domain app. Runs point at the namespace model by
its label ("memories.Namespace"); the job bodies live in the apps they serve and register
themselves (apps.jobs.services.register_job).
"""

from __future__ import annotations

from django.db import models

NAMESPACE_MODEL = "memories.Namespace"


class Job(models.TextChoices):
    PAGERANK = "pagerank"
    FEEDBACK_WEIGHTS = "feedback_weights"
    DECAY = "decay"
    REEMBED = "reembed"
    TRASH_PURGE = "trash_purge"
    NEAR_DUPLICATES = "near_duplicates"
    DIALOG_PASSAGES = "dialog_passages"
    VECTOR_INDEX = "vector_index"


class RunStatus(models.TextChoices):
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


class JobRun(models.Model):
    """One execution of one job, over one namespace or (namespace empty) all of them.

    `changes` holds what the run changed, e.g. {"memories_updated": 12, "namespaces": 2}; a run
    that found everything up to date says so with zero counts. Rows are written outside the job's
    own transaction, so a failed run is still recorded with its error.
    """

    job = models.CharField(max_length=30, choices=Job.choices)
    namespace = models.ForeignKey(
        NAMESPACE_MODEL, on_delete=models.CASCADE, null=True, blank=True, related_name="job_runs"
    )
    trigger = models.CharField(
        max_length=20, default="manual", help_text="beat, write, command, admin or manual"
    )
    status = models.CharField(max_length=10, choices=RunStatus.choices, default=RunStatus.RUNNING)
    started_at = models.DateTimeField(db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    duration_ms = models.FloatField(null=True, blank=True)
    changes = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True, default="")
    task_id = models.CharField(max_length=64, blank=True, default="")
    worker = models.CharField(max_length=200, blank=True, default="")

    class Meta:
        ordering = ["-started_at"]
        indexes = [models.Index(name="jobrun_job_started", fields=["job", "-started_at"])]

    def __str__(self) -> str:
        scope = self.namespace or "all namespaces"
        return f"{self.job} ({scope}) {self.status} {self.started_at:%Y-%m-%d %H:%M:%S}"


class JobCursor(models.Model):
    """How far a job has consumed an append-only log, per namespace (e.g. decay's position in
    QueryLog). Moved in the same transaction as the writes it accounts for: exactly once."""

    job = models.CharField(max_length=30, choices=Job.choices)
    namespace = models.ForeignKey(NAMESPACE_MODEL, on_delete=models.CASCADE, related_name="+")
    position = models.DateTimeField()
    # A log consumed in parts whose entries share a timestamp (one import stamps thousands of
    # revisions alike): the entries at `position` up to this id are consumed too.
    after_id = models.UUIDField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["job", "namespace"], name="jobcursor_job_ns_uniq")
        ]

    def __str__(self) -> str:
        return f"{self.job}:{self.namespace_id}@{self.position:%Y-%m-%d %H:%M:%S}"


class JobRequest(models.Model):
    """A job run a write asked for while the broker (Redis) could not take it. The
    `drain_job_requests` beat task queues these once the broker is back; one row per job and
    namespace, so a burst of writes during an outage still becomes one run."""

    job = models.CharField(max_length=30, choices=Job.choices)
    namespace = models.ForeignKey(NAMESPACE_MODEL, on_delete=models.CASCADE, related_name="+")
    requested_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["job", "namespace"], name="jobrequest_job_ns_uniq")
        ]

    def __str__(self) -> str:
        return f"{self.job}:{self.namespace_id} requested {self.requested_at:%Y-%m-%d %H:%M:%S}"


class LatestJobRun(JobRun):
    """Admin view of only the most recent run per job and scope."""

    class Meta:
        proxy = True
        verbose_name = "latest job run"


def namespace_model() -> type[models.Model]:
    """The model runs are scoped by, reached through the relation (no import of its app)."""
    return JobRun._meta.get_field("namespace").related_model
