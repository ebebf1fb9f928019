"""Reads of searches and their feedback, for REST, MCP and the UI."""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import Count, Q

from apps.access.permissions import Action, Principal
from apps.access.scoping import require
from apps.core.exceptions import NotFound
from apps.memories.models import Namespace
from apps.memories.selectors import count_by_namespace, memory_stats

from . import querylog
from .models import QueryLog


def query_log_for(
    principal: Principal, query_log_id: int, *, action: Action = Action.VIEW
) -> QueryLog:
    """A logged search the principal can see (feedback is given against it).

    The log row is written just after the search returns (querylog.py), so feedback may arrive
    first: on a miss, wait for pending writes once and look again.
    """
    logs = QueryLog.objects.restrict(principal, Action.VIEW).filter(pk=query_log_id)
    log = logs.select_related("namespace").first()
    if log is None:
        querylog.flush()
        log = logs.select_related("namespace").first()
    if log is None:
        raise NotFound(f"Search {query_log_id} does not exist or you cannot access it.")
    require(principal, log.namespace, action)
    return log


def namespace_stats(*, namespaces: Sequence[Namespace]) -> list[dict]:
    """Per namespace: memory, tag and edge counts, and how searches went (with feedback, with
    an evidence gap)."""
    stored = memory_stats(namespaces=namespaces)
    searches = count_by_namespace(
        QueryLog.objects.filter(namespace__in=namespaces),
        n_searches=Count("id"),
        n_searches_with_feedback=Count("id", filter=Q(feedback_at__isnull=False)),
        n_evidence_gaps=Count("id", filter=Q(evidence_gap=True)),
    )
    empty = {"searches": 0, "searches_with_feedback": 0, "evidence_gaps": 0}
    return [
        {"namespace": ns.name, **stored[ns.pk], **empty, **searches.get(ns.pk, {})}
        for ns in namespaces
    ]
