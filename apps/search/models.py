"""What searches did (QueryLog) and what feedback taught (StrategyWeights)."""

from __future__ import annotations

from typing import Any

from django.db import models
from django.db.models import Q
from pgvector.django import VectorField

from apps.core.querysets import RestrictedQuerySet
from apps.memories.models import EMBEDDING_DIM, Namespace


class Strategy(models.TextChoices):
    KEYWORD = "keyword"
    SEMANTIC = "semantic"
    GRAPH = "graph"
    EXACT = "exact"


class QueryLog(models.Model):
    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="query_logs")
    query = models.TextField()
    mode = models.CharField(max_length=10, default="hybrid")
    intent = models.CharField(max_length=20, blank=True, default="")
    entities = models.JSONField(default=list, blank=True)
    filters = models.JSONField(default=dict, blank=True)
    # {"keyword": 0.9, "semantic": 1.5, ...}: the weights actually used after adaptation.
    strategy_weights = models.JSONField(default=dict, blank=True)
    # [{"id": uuid, "score": float, "ranks": {"keyword": 1, "semantic": 4}}, ...] in result order.
    results = models.JSONField(default=list, blank=True)
    stage_timings_ms = models.JSONField(default=dict, blank=True)
    latency_ms = models.FloatField(default=0.0)
    evidence_gap = models.BooleanField(default=False)
    # A miss for the missed-searches queue: the evidence-gap flag or no result. Stored, so the
    # queue's aggregate reads it (and the query text) from an index, not from the 1 KB rows.
    missed = models.GeneratedField(
        # django-stubs want an Expression; Django takes a Q as well (a boolean condition)
        expression=models.Q(evidence_gap=True) | models.Q(results=[]),  # type: ignore[arg-type]
        output_field=models.BooleanField(),
        db_persist=True,
    )
    # Pairs of returned memory ids the search flagged as contradicting ([[a, b], ...]); the
    # conflicts queue reads them (a partial index keeps that read off the other rows).
    contradictions = models.JSONField(default=list, blank=True)
    fallback_retry = models.BooleanField(default=False)
    # Feedback given later: overall, and per result {memory_id: true/false}.
    was_useful = models.BooleanField(null=True, blank=True)
    result_feedback = models.JSONField(default=dict, blank=True)
    feedback_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    # The request's id (X-Request-ID), shared with the logs and the response header.
    request_id = models.CharField(max_length=128, blank=True, default="", db_index=True)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            # (namespace, created_at) for every period read; latency_ms included so the
            # analytics page's period percentiles read only the index, not the 1 KB rows.
            models.Index(
                name="querylog_ns_created_latency",
                fields=["namespace", "created_at"],
                include=["latency_ms"],
            ),
            # The missed-searches aggregate (every search of the window, by query text).
            models.Index(
                name="querylog_ns_created_missed",
                fields=["namespace", "created_at"],
                include=["missed", "query"],
            ),
            models.Index(name="querylog_feedback", fields=["namespace", "feedback_at"]),
            models.Index(
                name="querylog_contradictions",
                fields=["namespace", "created_at"],
                condition=~Q(contradictions=[]),
            ),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(latency_ms__gte=0), name="querylog_latency_pos"),
        ]

    def __str__(self) -> str:
        return f"{self.query[:60]} ({self.created_at:%Y-%m-%d %H:%M})"


class StrategyWeights(models.Model):
    namespace = models.ForeignKey(
        Namespace, on_delete=models.CASCADE, related_name="strategy_weights"
    )
    strategy = models.CharField(max_length=20, choices=Strategy.choices)
    weight = models.FloatField(default=1.0)
    usefulness_rate = models.FloatField(default=0.0)
    sample_size = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "strategy weights"
        ordering = ["namespace", "strategy"]
        constraints = [
            models.UniqueConstraint(fields=["namespace", "strategy"], name="weights_ns_strategy"),
            models.CheckConstraint(
                condition=Q(weight__gte=0.2) & Q(weight__lte=1.8), name="weights_range"
            ),
            models.CheckConstraint(
                condition=Q(usefulness_rate__gte=0) & Q(usefulness_rate__lte=1),
                name="weights_rate_range",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.namespace}:{self.strategy}={self.weight:.2f}"


class MissedQueryDismissal(models.Model):
    """A missed search a curator set aside: the query (trimmed, lower case) stays out of the
    missed-searches queue of its namespace, however often assistants ask it again."""

    namespace = models.ForeignKey(
        Namespace, on_delete=models.CASCADE, related_name="missed_dismissals"
    )
    query_key = models.TextField()
    dismissed_by = models.CharField(max_length=150, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["namespace", "query_key"], name="missed_dismissal_ns_key"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.namespace}: {self.query_key[:60]}"


class MissedQueryVector(models.Model):
    """The embedding of a query that missed (trimmed, lower-case key), stored when the search
    that missed already had it, so the missed-searches queue groups queries by meaning
    without embedding them again."""

    namespace = models.ForeignKey(
        Namespace, on_delete=models.CASCADE, related_name="missed_vectors"
    )
    query_key = models.TextField()
    embedding = VectorField(dimensions=EMBEDDING_DIM)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["namespace", "query_key"], name="missed_vector_ns_key"),
        ]

    def __str__(self) -> str:
        return f"{self.namespace}: {self.query_key[:60]}"


# --- the analytics page's daily roll-up --------------------------------------------------------
#
# One row per namespace and closed UTC day (and per strategy, returned memory or query text):
# what the analytics page would otherwise aggregate from every search-log row of the period.
# Written by apps.search.rollup when a page first needs a day, dropped again for a day whose
# searches get feedback, so a period of 90 days reads a few thousand narrow rows instead of
# 100,000 search-log rows with their results JSON.
#
# No foreign-key constraint in the database: its trigger, fired for each of the tens of
# thousands of rows a month's roll-up inserts, cost more than the aggregation itself. Django
# still deletes the rows with their namespace (one DELETE per table).
_ROLLUP_NAMESPACE: dict[str, Any] = {
    "on_delete": models.CASCADE,
    "related_name": "+",
    "db_constraint": False,
}


class SearchDay(models.Model):
    """A day's searches; a day without any has a row too (searches 0), so it is not redone."""

    namespace = models.ForeignKey(Namespace, **_ROLLUP_NAMESPACE)
    day = models.DateField()
    searches = models.IntegerField()
    gaps = models.IntegerField()
    zero = models.IntegerField()
    judged = models.IntegerField()
    p50_ms = models.FloatField(null=True)
    p95_ms = models.FloatField(null=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["namespace", "day"], name="searchday_ns_day"),
        ]

    def __str__(self) -> str:
        return f"{self.day}: {self.searches} searches"


class SearchDayStrategy(models.Model):
    namespace = models.ForeignKey(Namespace, **_ROLLUP_NAMESPACE)
    day = models.DateField()
    strategy = models.TextField()
    returned = models.IntegerField()
    judged = models.IntegerField()
    useful = models.IntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["namespace", "day", "strategy"], name="searchdaystrategy_uniq"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.day} {self.strategy}: {self.returned}"


class SearchDayMemory(models.Model):
    """How often a day's (or a week's) searches returned a memory (by id, as the log holds
    it). Closed weeks are summed once more, so a 90-day period reads about a third as many
    rows: the busiest table, one row per memory returned that day."""

    namespace = models.ForeignKey(Namespace, **_ROLLUP_NAMESPACE)
    day = models.DateField()
    # 1: the day `day`; 7: the week starting on Monday `day` (the sum of its seven days).
    span = models.SmallIntegerField(db_default=1)
    # Byte order ("C"): the key is only grouped and matched, and C compares several times faster.
    memory_id = models.TextField(db_collation="C")
    returned = models.IntegerField()
    first = models.IntegerField()
    useful = models.IntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["namespace", "day", "span", "memory_id"], name="searchdaymemory_uniq"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.day} {self.memory_id}: {self.returned}"


class SearchDayQuery(models.Model):
    """A day's (or a week's) searches per query text (trimmed, lower case)."""

    namespace = models.ForeignKey(Namespace, **_ROLLUP_NAMESPACE)
    day = models.DateField()
    # 1: the day `day`; 7: the week starting on Monday `day` (the sum of its seven days).
    span = models.SmallIntegerField(db_default=1)
    key = models.TextField(db_collation="C")
    searches = models.IntegerField()
    gaps = models.IntegerField()
    last_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["namespace", "day", "span", "key"], name="searchdayquery_uniq"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.day} {self.key[:40]}: {self.searches}"
