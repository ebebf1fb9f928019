"""What the assistants did with a namespace's memory over a period: the figures of the
analytics page, aggregated by PostgreSQL (date_trunc, percentile_cont, GROUP BY over the
search log's JSON), so a page costs a handful of queries whatever the number of searches.

Every function takes the namespace (already resolved and permission-checked by the caller) and
a half-open period [since, until). Days are UTC calendar days (settings.TIME_ZONE).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import connection
from django.db.models import Aggregate, Count, FloatField, Max, Q
from django.db.models.functions import Left, Lower, Trim, TruncDay
from django.utils import timezone

from apps.memories.models import Memory, Namespace

from .models import QueryLog

PERIODS = (7, 30, 90, 365)
TOP = 10


@dataclass(frozen=True)
class Period:
    since: datetime
    until: datetime
    days: int


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

    def __init__(self, expression, fraction: float, **extra):
        super().__init__(expression, fraction=float(fraction), **extra)


def _logs(namespace: Namespace, p: Period):
    return QueryLog.objects.filter(
        namespace=namespace, created_at__gte=p.since, created_at__lt=p.until
    )


def searches_per_day(*, namespace: Namespace, p: Period) -> list[dict]:
    """Per day: searches, p50/p95 latency (ms), evidence gaps and zero-result searches."""
    rows = (
        _logs(namespace, p)
        .annotate(day=TruncDay("created_at"))
        .values("day")
        .annotate(
            searches=Count("id"),
            p50_ms=PercentileCont("latency_ms", 0.5),
            p95_ms=PercentileCont("latency_ms", 0.95),
            gaps=Count("id", filter=Q(evidence_gap=True)),
            zero=Count("id", filter=Q(results=[])),
        )
        .order_by("day")
    )
    return [
        {
            **row,
            "day": row["day"].date().isoformat(),
            "p50_ms": round(row["p50_ms"], 1),
            "p95_ms": round(row["p95_ms"], 1),
            "gap_rate": round(100 * row["gaps"] / row["searches"], 1),
            "zero_rate": round(100 * row["zero"] / row["searches"], 1),
        }
        for row in rows
    ]


def totals(*, namespace: Namespace, p: Period) -> dict:
    """The period at a glance: searches, latency percentiles, gap and zero-result rates."""
    row = _logs(namespace, p).aggregate(
        searches=Count("id"),
        p50_ms=PercentileCont("latency_ms", 0.5),
        p95_ms=PercentileCont("latency_ms", 0.95),
        gaps=Count("id", filter=Q(evidence_gap=True)),
        zero=Count("id", filter=Q(results=[])),
        judged=Count("id", filter=Q(feedback_at__isnull=False)),
    )
    n = row["searches"] or 0
    return {
        **row,
        "p50_ms": round(row["p50_ms"] or 0, 1),
        "p95_ms": round(row["p95_ms"] or 0, 1),
        "gap_rate": round(100 * row["gaps"] / n, 1) if n else 0.0,
        "zero_rate": round(100 * row["zero"] / n, 1) if n else 0.0,
    }


# A returned result's verdict: its own (result_feedback), else the search's overall one.
# Rows are read defensively: a results value that is not an array, or ranks that are not an
# object, count as empty instead of failing the page.
_RESULTS = """
    CROSS JOIN LATERAL jsonb_array_elements(
        CASE WHEN jsonb_typeof(q.results) = 'array' THEN q.results ELSE '[]'::jsonb END
    ) WITH ORDINALITY AS r(value, position)
"""
_VERDICT = """
    CASE q.result_feedback ->> (r.value ->> 'id')
        WHEN 'true' THEN true WHEN 'false' THEN false ELSE q.was_useful END
"""
_PERIOD = "q.namespace_id = %s AND q.created_at >= %s AND q.created_at < %s"


def _fetch(sql: str, params: list) -> list[dict]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        names = [c.name for c in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def strategy_contributions(*, namespace: Namespace, p: Period) -> list[dict]:
    """Per strategy (keyword, semantic, graph, exact): how many returned results it ranked,
    and of those the feedback judged, how many were useful."""
    sql = f"""
        SELECT k.strategy,
               count(*) AS returned,
               count(*) FILTER (WHERE ({_VERDICT}) IS NOT NULL) AS judged,
               count(*) FILTER (WHERE ({_VERDICT})) AS useful
        FROM search_querylog q
        {_RESULTS}
        CROSS JOIN LATERAL jsonb_object_keys(
            CASE WHEN jsonb_typeof(r.value -> 'ranks') = 'object'
                 THEN r.value -> 'ranks' ELSE '{{}}'::jsonb END
        ) AS k(strategy)
        WHERE {_PERIOD}
        GROUP BY k.strategy
        ORDER BY returned DESC, k.strategy
    """
    rows = _fetch(sql, [namespace.pk, p.since, p.until])
    for row in rows:
        judged = row["judged"]
        row["useful_rate"] = round(100 * row["useful"] / judged, 1) if judged else None
    return rows


def top_queries(*, namespace: Namespace, p: Period, limit: int = TOP) -> list[dict]:
    """The most asked queries (trimmed, lower case), with their evidence gaps and last time."""
    rows = (
        _logs(namespace, p)
        .annotate(key=Lower(Trim("query")))
        .values("key")
        .annotate(
            searches=Count("id"),
            gaps=Count("id", filter=Q(evidence_gap=True)),
            last_at=Max("created_at"),
        )
        .order_by("-searches", "key")[:limit]
    )
    return [{**row, "query": row.pop("key")} for row in rows]


def top_memories(*, namespace: Namespace, p: Period, limit: int = TOP) -> list[dict]:
    """The memories searches returned most often (how often first, how often judged useful),
    with their titles; a memory deleted since shows its id only."""
    sql = f"""
        SELECT r.value ->> 'id' AS id,
               count(*) AS returned,
               count(*) FILTER (WHERE r.position = 1) AS first,
               count(*) FILTER (WHERE ({_VERDICT})) AS useful
        FROM search_querylog q
        {_RESULTS}
        WHERE {_PERIOD} AND jsonb_typeof(r.value -> 'id') = 'string'
        GROUP BY 1
        ORDER BY returned DESC, id
        LIMIT %s
    """
    rows = _fetch(sql, [namespace.pk, p.since, p.until, limit])
    ids = [row["id"] for row in rows if _is_uuid(row["id"])]
    found = {
        str(m["id"]): m
        for m in Memory.objects.filter(namespace=namespace, pk__in=ids)
        .annotate(snippet=Left("content", 200))
        .values("id", "title", "snippet", "category")
    }
    for row in rows:
        memory = found.get(row["id"])
        row["exists"] = memory is not None
        row["label"] = _label(memory) if memory else row["id"][:8]
        row["category"] = memory["category"] if memory else ""
    return rows


def _label(memory: dict, width: int = 60) -> str:
    text = memory["title"] or " ".join(memory["snippet"].split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _is_uuid(value: str) -> bool:
    import uuid

    try:
        uuid.UUID(value)
    except (TypeError, ValueError):
        return False
    return True
