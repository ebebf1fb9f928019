"""What the assistants did with a namespace's memory over a period: the figures of the
analytics page, aggregated by PostgreSQL (percentile_cont, GROUP BY over the search log's
JSON), so a page costs a handful of queries whatever the number of searches. Closed days come
from the daily roll-up (apps.search.rollup: a few narrow rows per day), the last two from the
raw log through the same SQL.

Every function takes the namespace (already resolved and permission-checked by the caller) and
a half-open period [since, until). Days are UTC calendar days (settings.TIME_ZONE).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from django.db import connection
from django.db.models import Aggregate, FloatField, Model, QuerySet
from django.db.models.functions import Left
from django.utils import timezone

from apps.core.values import is_uuid
from apps.memories.models import Memory, Namespace
from apps.memories.titles import shown_title

from . import rollup
from .models import QueryLog, SearchDay, SearchDayMemory, SearchDayQuery, SearchDayStrategy

PERIODS = (7, 30, 90, 365)
TOP = 10


@dataclass(frozen=True)
class Period:
    since: datetime
    until: datetime
    days: int
    # The namespace whose roll-up already covers this period (see `prepare`).
    ready_for: int | None = None


def period(days: int, *, now: datetime | None = None) -> Period:
    """The last `days` calendar days, today included (UTC midnight to tomorrow's midnight)."""
    now = now or timezone.now()
    until = now.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1)
    return Period(since=until - timedelta(days=days), until=until, days=days)


class PercentileCont(Aggregate):
    """PostgreSQL's percentile_cont(fraction) WITHIN GROUP (ORDER BY expression)."""

    function = "PERCENTILE_CONT"
    template = "%(function)s(%(fraction)s) WITHIN GROUP (ORDER BY %(expressions)s)"
    output_field = FloatField()

    def __init__(self, expression: Any, fraction: float, **extra: Any) -> None:
        super().__init__(expression, fraction=float(fraction), **extra)


def _logs(namespace: Namespace, p: Period) -> QuerySet[QueryLog]:
    return QueryLog.objects.filter(
        namespace=namespace, created_at__gte=p.since, created_at__lt=p.until
    )


def _fetch(sql: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        names = [c.name for c in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def prepare(namespace: Namespace, p: Period) -> Period:
    """Roll up the period's closed days not rolled up yet (a first view of old days pays it);
    the period returned tells the selectors it is done, so a page checks once."""
    rollup.ensure(namespace_id=namespace.pk, since=p.since, until=p.until)
    return replace(p, ready_for=namespace.pk)


def _prepared(namespace: Namespace, p: Period) -> None:
    if p.ready_for != namespace.pk:
        prepare(namespace, p)


def _combined(model: type[Model], namespace: Namespace, p: Period) -> tuple[str, dict[str, Any]]:
    return rollup.combined(model, namespace_id=namespace.pk, since=p.since, until=p.until)


def searches_per_day(*, namespace: Namespace, p: Period) -> list[dict[str, Any]]:
    """Per day with searches: how many, p50/p95 latency (ms), evidence gaps, zero results."""
    _prepared(namespace, p)
    rows, params = _combined(SearchDay, namespace, p)
    sql = f"SELECT * FROM ({rows}) AS d WHERE searches > 0 ORDER BY day"
    return [
        {
            "day": row["day"].isoformat(),
            "searches": row["searches"],
            "gaps": row["gaps"],
            "zero": row["zero"],
            "judged": row["judged"],
            "p50_ms": round(row["p50_ms"], 1),
            "p95_ms": round(row["p95_ms"], 1),
            "gap_rate": round(100 * row["gaps"] / row["searches"], 1),
            "zero_rate": round(100 * row["zero"] / row["searches"], 1),
        }
        for row in _fetch(sql, params)
    ]


def totals(
    *, namespace: Namespace, p: Period, per_day: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The period at a glance: searches, latency percentiles, gap and zero-result rates. The
    counts add up the per-day rows (pass them when already read); the percentiles of the
    whole period come from the log's (namespace, created_at) index, which holds latency_ms."""
    days = per_day if per_day is not None else searches_per_day(namespace=namespace, p=p)
    row = {k: sum(d[k] for d in days) for k in ("searches", "gaps", "zero", "judged")}
    latency = _logs(namespace, p).aggregate(
        p50_ms=PercentileCont("latency_ms", 0.5), p95_ms=PercentileCont("latency_ms", 0.95)
    )
    n = row["searches"]
    return {
        **row,
        "p50_ms": round(latency["p50_ms"] or 0, 1),
        "p95_ms": round(latency["p95_ms"] or 0, 1),
        "gap_rate": round(100 * row["gaps"] / n, 1) if n else 0.0,
        "zero_rate": round(100 * row["zero"] / n, 1) if n else 0.0,
    }


def strategy_contributions(*, namespace: Namespace, p: Period) -> list[dict[str, Any]]:
    """Per strategy (keyword, semantic, graph, exact): how many returned results it ranked,
    and of those the feedback judged, how many were useful."""
    _prepared(namespace, p)
    rows, params = _combined(SearchDayStrategy, namespace, p)
    sql = f"""
        SELECT strategy, sum(returned)::int AS returned, sum(judged)::int AS judged,
               sum(useful)::int AS useful
        FROM ({rows}) AS s GROUP BY strategy ORDER BY returned DESC, strategy
    """
    result = _fetch(sql, params)
    for row in result:
        judged = row["judged"]
        row["useful_rate"] = round(100 * row["useful"] / judged, 1) if judged else None
    return result


def top_queries(*, namespace: Namespace, p: Period, limit: int = TOP) -> list[dict[str, Any]]:
    """The most asked queries (trimmed, lower case), with their evidence gaps and last time."""
    _prepared(namespace, p)
    rows, params = _combined(SearchDayQuery, namespace, p)
    sql = f"""
        SELECT key AS query, sum(searches)::int AS searches, sum(gaps)::int AS gaps,
               max(last_at) AS last_at
        FROM ({rows}) AS s GROUP BY key ORDER BY searches DESC, key LIMIT %(limit)s
    """
    return _fetch(sql, {**params, "limit": limit})


def top_memories(*, namespace: Namespace, p: Period, limit: int = TOP) -> list[dict[str, Any]]:
    """The memories searches returned most often (how often first, how often judged useful),
    with their titles; a memory deleted since shows its id only."""
    _prepared(namespace, p)
    rows, params = _combined(SearchDayMemory, namespace, p)
    sql = f"""
        SELECT memory_id AS id, sum(returned)::int AS returned, sum(first)::int AS first,
               sum(useful)::int AS useful
        FROM ({rows}) AS s GROUP BY memory_id ORDER BY returned DESC, id LIMIT %(limit)s
    """
    top = _fetch(sql, {**params, "limit": limit})
    ids = [row["id"] for row in top if is_uuid(row["id"])]
    found = {
        str(m["id"]): m
        for m in Memory.objects.filter(namespace=namespace, pk__in=ids)
        .annotate(snippet=Left("content", 200))
        .values("id", "title", "snippet", "category")
    }
    for row in top:
        memory = found.get(row["id"])
        row["exists"] = memory is not None
        row["label"] = _label(memory) if memory else row["id"][:8]
        row["category"] = memory["category"] if memory else ""
    return top


def _label(memory: dict[str, Any], width: int = 60) -> str:
    text = shown_title(memory["title"], memory["snippet"])
    return text if len(text) <= width else text[: width - 1] + "…"
