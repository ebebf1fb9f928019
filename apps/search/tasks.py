"""Celery tasks of the search app: the analytics roll-up, made ahead of the page; the prune of
the namespaces' change log that the kept vectors read (reads/namespace_vectors.py)."""

from __future__ import annotations

from celery import shared_task
from django.utils import timezone

from apps.memories.models import Namespace
from apps.memories.namespace_changes import namespace_changes_prune

from . import analytics, rollup


@shared_task  # type: ignore[untyped-decorator]  # celery ships no types
def analytics_rollup_task(days: int = max(analytics.PERIODS)) -> int:
    """Roll up yesterday (and any other day of the longest period not rolled up yet) for every
    namespace, shortly after midnight, so no analytics page pays for it. Returns the days."""
    p = analytics.period(days, now=timezone.now())
    return sum(
        rollup.ensure(namespace_id=pk, since=p.since, until=p.until)
        for pk in Namespace.objects.values_list("pk", flat=True)
    )


@shared_task  # type: ignore[untyped-decorator]  # celery ships no types
def namespace_changes_prune_task() -> dict[str, int]:
    """Keep the change log short (apps/memories/namespace_changes.py): every minute."""
    return namespace_changes_prune()
