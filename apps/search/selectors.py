"""Reads of searches and their feedback, for REST, MCP and the UI."""

from __future__ import annotations

from apps.access.permissions import Action, Principal
from apps.access.scoping import require
from apps.core.exceptions import NotFound

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
