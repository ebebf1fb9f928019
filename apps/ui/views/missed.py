"""Missed searches: what assistants asked that the memory could not answer, as a to-do list.

Searches that ended with the evidence-gap flag or no result, grouped by meaning, most missed
first. The curator writes the missing memory (the create form, prefilled with the query) or
dismisses the group for good.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from apps.core.values import text_problem
from apps.memories.models import Namespace
from apps.search.selectors import missed_dismiss as dismiss_queries
from apps.search.selectors import (
    missed_dismissed,
    missed_groups,
    missed_queries,
    missed_settings,
    missed_undismiss,
)

from ..templatetags.stale_nav import forget_counts
from ..view_permissions import Action, can, namespace_view
from .common import counted

SHOWN_GROUPS = 100


@namespace_view(Action.VIEW)
def missed_page(request: HttpRequest, namespace: Namespace) -> HttpResponse:
    queries = missed_queries(namespace=namespace)
    groups = missed_groups(namespace=namespace, rows=queries)
    create = reverse("ui:create", args=[namespace.name])
    rows = [
        {"group": g, "write_url": f"{create}?{urlencode({'content': g.lead})}"}
        for g in groups[:SHOWN_GROUPS]
    ]
    context = {
        "namespace": namespace,
        "rows": rows,
        "total": len(groups),
        "conf": missed_settings(),
        "dismissed": missed_dismissed(namespace=namespace),
        "queue_counts_known": {"missed": len(queries)},  # the navigation's count, not re-read
        "can_change": can(request.user, namespace, Action.CHANGE),
    }
    return render(request, "ui/missed/page.html", context)


@namespace_view(Action.CHANGE)
@require_POST
def missed_dismiss(request: HttpRequest, namespace: Namespace) -> HttpResponse:
    keys = _keys(request)
    if keys is None:
        messages.error(request, f"keys: {KEY_PROBLEM}")
    elif not keys:
        messages.error(request, "keys: choose a group of queries to dismiss.")
    else:
        forget_counts(namespace.name)
        dismiss_queries(namespace=namespace, keys=keys, by=request.user.get_username())
        messages.success(
            request,
            f"Dismissed {counted(len(keys), 'query,queries')}; they stay out of this queue.",
        )
    return redirect("ui:missed", namespace=namespace.name)


@namespace_view(Action.CHANGE)
@require_POST
def missed_bring_back(request: HttpRequest, namespace: Namespace) -> HttpResponse:
    """Undo a dismissal: the query goes back to the queue while its latest search missed."""
    keys = _keys(request)
    if keys is None:
        messages.error(request, f"keys: {KEY_PROBLEM}")
    elif not keys:
        messages.error(request, "keys: choose a dismissed query to bring back.")
    else:
        forget_counts(namespace.name)
        count = missed_undismiss(namespace=namespace, keys=keys)
        messages.success(
            request, f"Brought back {counted(count, 'dismissed query,dismissed queries')}."
        )
    return redirect("ui:missed", namespace=namespace.name)


KEY_PROBLEM = "each key is a search query of at most 2000 characters, without NUL characters."


def _keys(request: HttpRequest) -> list[str] | None:
    """The posted query keys, or None when one of them is no search query (a NUL character
    cannot even be stored, so it can never have been searched)."""
    keys = request.POST.getlist("keys")
    if any(len(k) > settings.SEARCH_QUERY_MAX_CHARS or text_problem(k) for k in keys):
        return None
    return keys
