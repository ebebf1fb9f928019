"""Revisions of memories and the trash of deleted ones (SPEC section 2).

A revision names the memory by id, not by foreign key: it must outlive the memory (a deleted
memory's history stays readable from the trash and comes back with it). The actor is kept as a
nullable user or token plus a label copied at write time, so "who" survives the user or token
being deleted.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from apps.access.models import ApiToken
from apps.core.changes import ChangeAction as Action
from apps.core.querysets import RestrictedQuerySet
from apps.memories.models import Namespace


class Door(models.TextChoices):
    """Through which interface a change came."""

    UI = "ui"
    REST = "rest"
    MCP = "mcp"
    ADMIN = "admin"
    JOB = "job"
    CLI = "cli"
    SYSTEM = "system"


class MemoryRevision(models.Model):
    """One change to one memory.

    `before` and `after` hold only the fields this change touched (a creation has no `before`, a
    deletion no `after`), with JSON-safe values: tags as a sorted list of names, dates as ISO
    strings. Link and unlink revisions carry the edge under the key "edge".
    """

    memory_id = models.UUIDField()
    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="revisions")
    actor_user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="memory_revisions",
    )
    actor_token = models.ForeignKey(
        ApiToken, on_delete=models.SET_NULL, null=True, blank=True, related_name="revisions"
    )
    actor_label = models.CharField(max_length=200)
    door = models.CharField(max_length=10, choices=Door.choices)
    action = models.CharField(max_length=12, choices=Action.choices)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(name="revision_memory_created", fields=["memory_id", "-created_at"]),
            models.Index(name="revision_ns_created", fields=["namespace", "-created_at"]),
        ]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(door__in=Door.values), name="revision_door_valid"
            ),
            models.CheckConstraint(
                condition=models.Q(action__in=Action.values), name="revision_action_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.action} {self.memory_id} by {self.actor_label} via {self.door}"

    @property
    def changed_fields(self) -> list[str]:
        return sorted(set(self.before or {}) | set(self.after or {}))


class TrashEntry(models.Model):
    """A deleted memory's last version, restorable with the same id until purged.

    One entry per namespace and memory id: a row of another namespace that carries the same id
    (older imports could make one) never overwrites or purges this namespace's.

    `snapshot` holds every column needed to put the row back (embedding included, so a restore
    needs no model); `tags` the tag names; `edges` the causal edges it had in either direction,
    as {"source", "target", "relation", "strength", "created_at"}.
    """

    memory_id = models.UUIDField(db_index=True)
    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="trash")
    snapshot = models.JSONField()
    tags = models.JSONField(default=list)
    edges = models.JSONField(default=list)
    deleted_at = models.DateTimeField(default=timezone.now, db_index=True)
    deleted_by = models.CharField(max_length=200)
    door = models.CharField(max_length=10, choices=Door.choices)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["-deleted_at", "-id"]
        verbose_name_plural = "trash entries"
        indexes = [models.Index(name="trash_ns_deleted", fields=["namespace", "-deleted_at"])]
        constraints = [
            models.UniqueConstraint(fields=["namespace", "memory_id"], name="trash_ns_memory_uniq")
        ]

    def __str__(self) -> str:
        text = self.snapshot.get("title") or self.snapshot.get("content", "")
        return f"{text[:60]} (deleted {self.deleted_at:%Y-%m-%d %H:%M})"

    @property
    def title(self) -> str:
        return self.snapshot.get("title", "")

    @property
    def content(self) -> str:
        return self.snapshot.get("content", "")
