"""The analytics page: what the assistants did with a namespace's memory over a period.

Every figure comes from a selector that aggregates in PostgreSQL (apps.search.analytics,
apps.memories.selectors.growth_by_category, apps.jobs.selectors.latest_runs). Each chart is
drawn by Chart.js (static/vendor) from a JSON block next to it (json_script: data, not
script, so the Content-Security-Policy still refuses inline code) and has its table beside it.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from apps.jobs.selectors import latest_runs
from apps.memories.models import Category, Namespace
from apps.memories.selectors import growth_by_category
from apps.search import analytics

from ..forms import AnalyticsForm
from ..view_permissions import Action, namespace_view


@namespace_view(Action.VIEW)
def analytics_page(request: HttpRequest, namespace: Namespace) -> HttpResponse:
    form = AnalyticsForm(request.GET or None)
    days = form.cleaned_data["days"] if form.is_bound and form.is_valid() else 30
    if not form.is_bound:
        form = AnalyticsForm(initial={"days": days})
    p = analytics.prepare(namespace, analytics.period(days))
    per_day = analytics.searches_per_day(namespace=namespace, p=p)
    strategies = analytics.strategy_contributions(namespace=namespace, p=p)
    queries = analytics.top_queries(namespace=namespace, p=p)
    memories = analytics.top_memories(namespace=namespace, p=p)
    growth = growth_by_category(namespace=namespace, since=p.since, until=p.until)
    charts = {
        "searches": {
            "labels": [r["day"] for r in per_day],
            "searches": [r["searches"] for r in per_day],
            "p50": [r["p50_ms"] for r in per_day],
            "p95": [r["p95_ms"] for r in per_day],
        },
        "rates": {
            "labels": [r["day"] for r in per_day],
            "gap": [r["gap_rate"] for r in per_day],
            "zero": [r["zero_rate"] for r in per_day],
        },
        "strategies": {
            "labels": [r["strategy"] for r in strategies],
            "returned": [r["returned"] for r in strategies],
            "useful": [r["useful_rate"] for r in strategies],
        },
        "queries": {
            "labels": [r["query"] for r in queries],
            "searches": [r["searches"] for r in queries],
        },
        "memories": {
            "labels": [r["label"] for r in memories],
            "returned": [r["returned"] for r in memories],
        },
        "growth": _growth_series(growth),
    }
    context = {
        "namespace": namespace,
        "form": form,
        "period": p,
        "totals": analytics.totals(namespace=namespace, p=p, per_day=per_day),
        "per_day": per_day,
        "strategies": strategies,
        "queries": queries,
        "memories": memories,
        "growth": growth,
        "runs": latest_runs(namespace_id=namespace.pk),
        "charts": charts,
    }
    return render(request, "ui/analytics/page.html", context)


def _growth_series(rows: list[dict]) -> dict:
    """Running totals per category on the days anything was created (SQL gives one row per
    day and category that had a creation; a category without one that day keeps its total)."""
    days = sorted({r["day"] for r in rows})
    series = {}
    for category in [c for c in Category.values if any(r["category"] == c for r in rows)]:
        totals = {r["day"]: r["total"] for r in rows if r["category"] == category}
        line, last = [], None
        for day in days:
            last = totals.get(day, last)
            line.append(last)
        series[category] = line
    return {"labels": days, "series": series}
