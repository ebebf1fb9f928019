"""The batches kept for the background (apps/transfer/batch_jobs.py)."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from apps.memories.models import Namespace


class BatchState(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class BatchJob(models.Model):
    """A batch of memories too large to write inside its request (apps/transfer/batch_jobs.py):
    checked and kept here when it arrives, written whole in the background, polled by its
    client. `done` counts the items encoded so far; `results` (one WriteResult.to_dict() per
    item) and the counts are set in the transaction that stores the memories."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="batch_jobs")
    # Who asked (one of the three, or none for the system), named by label: the access app
    # sits above this one.
    actor_token = models.ForeignKey(
        "access.ApiToken", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    actor_connection = models.ForeignKey(
        "access.OAuthConnection", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    actor_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    door = models.CharField(max_length=20)
    # What the door knew beyond the actor (provenance.Origin as a dict: the MCP client).
    origin = models.JSONField(default=dict, blank=True, db_default={})
    on_duplicate = models.CharField(max_length=20, default="report")
    items = models.JSONField()
    total = models.PositiveIntegerField()
    state = models.CharField(max_length=10, choices=BatchState.choices, default=BatchState.QUEUED)
    done = models.PositiveIntegerField(default=0)
    # The runner that holds the job; a runner that took it over changes it, and only the
    # holder may store the memories.
    claim = models.UUIDField(null=True, blank=True)
    created = models.PositiveIntegerField(default=0)
    already_stored = models.PositiveIntegerField(default=0)
    results = models.JSONField(null=True, blank=True)
    errors = models.JSONField(default=dict, blank=True)
    queued_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        # The table it had in the memories app (migration memories 0026 moved only the state).
        db_table = "memories_batchjob"
        indexes = [
            models.Index(
                name="batchjob_pending",
                fields=["queued_at"],
                condition=Q(state__in=["queued", "running"]),
            )
        ]

    def __str__(self) -> str:
        return f"batch {self.id} ({self.namespace_id}): {self.state} {self.done}/{self.total}"

    @property
    def actor(self) -> models.Model | None:
        return self.actor_token or self.actor_connection or self.actor_user
