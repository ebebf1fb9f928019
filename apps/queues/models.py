"""A near-duplicate pair found by the job and what the curator decided about it.

One row per unordered pair (first < second by id), so a decision such as "keep both" sticks:
the job never reopens a pair it has already stored, whatever its status.
"""

from __future__ import annotations

from django.db import models
from django.db.models import F, Q


class PairStatus(models.TextChoices):
    OPEN = "open"
    KEPT_BOTH = "kept_both"
    MERGED = "merged"
    SUPERSEDED = "superseded"


class DuplicatePair(models.Model):
    namespace = models.ForeignKey(
        "memories.Namespace", on_delete=models.CASCADE, related_name="duplicate_pairs"
    )
    first = models.ForeignKey("memories.Memory", on_delete=models.CASCADE, related_name="+")
    second = models.ForeignKey("memories.Memory", on_delete=models.CASCADE, related_name="+")
    similarity = models.FloatField()
    found_at = models.DateTimeField(auto_now_add=True)
    status = models.CharField(max_length=12, choices=PairStatus.choices, default=PairStatus.OPEN)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["first", "second"], name="duplicatepair_uniq"),
            models.CheckConstraint(condition=Q(first__lt=F("second")), name="duplicatepair_order"),
        ]
        indexes = [models.Index(fields=["namespace", "status"], name="duplicatepair_ns_status")]

    def __str__(self) -> str:
        return f"{self.first_id} ~ {self.second_id} ({self.similarity:.3f}, {self.status})"


class ConflictStatus(models.TextChoices):
    RESOLVED = "resolved"
    KEPT_ONE = "kept_one"
    SUPERSEDED = "superseded"  # the newer one replaces the other: its validity ends


class ConflictDecision(models.Model):
    """A curator's decision on two memories that contradict each other (joined by a
    `contradicts` link, or flagged by a search): one row per unordered pair (first < second),
    so a decided conflict never comes back to the queue."""

    namespace = models.ForeignKey(
        "memories.Namespace", on_delete=models.CASCADE, related_name="conflict_decisions"
    )
    first = models.ForeignKey("memories.Memory", on_delete=models.CASCADE, related_name="+")
    second = models.ForeignKey("memories.Memory", on_delete=models.CASCADE, related_name="+")
    status = models.CharField(max_length=12, choices=ConflictStatus.choices)
    note = models.TextField(blank=True, default="")
    decided_by = models.CharField(max_length=150, blank=True, default="")
    decided_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["first", "second"], name="conflictdecision_uniq"),
            models.CheckConstraint(
                condition=Q(first__lt=F("second")), name="conflictdecision_order"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.first_id} ≠ {self.second_id} ({self.status})"
