"""The near-duplicates queue: pairs the near_duplicates job found (cosine >= the setting), side
by side with a word-level diff (stdlib difflib, the history's word_diff), and what to do about
them: merge (keep one text, or a combined text you edit), keep both, or mark one as superseding
the other. Every action goes through the write services, so it shows in the memories' history
and can be undone there ("Undo this merge", "Restore this version", unlink).
"""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from apps.core.exceptions import ValidationFailed
from apps.memories.models import Namespace
from apps.queues import services
from apps.queues.models import DuplicatePair
from apps.queues.selectors import open_pairs, side_by_side

from ..templatetags.stale_nav import forget_counts
from ..view_permissions import Action, can, namespace_view
from .common import page_of, writer

PAGE_SIZE = 20
ACTIONS = ("merge", "keep_both", "supersede")


@namespace_view(Action.VIEW)
def duplicates_page(request: HttpRequest, namespace: Namespace) -> HttpResponse:
    page = page_of(request, open_pairs(namespace), PAGE_SIZE)
    rows = []
    for pair in page:
        left, right = side_by_side(pair.first.content, pair.second.content)
        rows.append({"pair": pair, "left": left, "right": right})
    context = {
        "namespace": namespace,
        "rows": rows,
        "page": page,
        "threshold": settings.NEAR_DUPLICATE_THRESHOLD,
        "can_change": can(request.user, namespace, Action.CHANGE),
    }
    return render(request, "ui/duplicates/page.html", context)


@namespace_view(Action.CHANGE)
@require_POST
def duplicates_act(request: HttpRequest, namespace: Namespace) -> HttpResponse:
    back = redirect("ui:duplicates", namespace=namespace.name)
    try:
        pair_id = int(request.POST.get("pair", ""))
    except ValueError:
        messages.error(request, "pair: choose a pair from the list.")
        return back
    pair = (
        DuplicatePair.objects.filter(namespace=namespace, pk=pair_id)
        .select_related("first", "second", "namespace")
        .first()
    )
    if pair is None:
        raise Http404("No such pair in this namespace.")
    action, chosen = _requested(request)
    confirmed = request.POST.get("confirm_constitutional") == "1"
    try:
        if action == "merge":
            content = request.POST.get("content")
            kept = services.pair_merge(
                pair=pair,
                keep_id=chosen,
                content=content,
                confirm_constitutional=confirmed,
                **writer(request),
            )
            messages.success(
                request,
                "Merged: the other memory is archived and superseded by this one; its tags and "
                "links moved here. Undo it from this memory's history.",
            )
            forget_counts(namespace.name)
            return redirect("ui:memory", memory_id=kept.pk)
        if action == "keep_both":
            services.pair_keep_both(pair=pair, **writer(request))
            messages.success(request, "Kept both; this pair will not be suggested again.")
        elif action == "supersede":
            services.pair_supersede(
                pair=pair, newer_id=chosen, confirm_constitutional=confirmed, **writer(request)
            )
            messages.success(
                request, "Marked as superseding; the older memory is archived (see its history)."
            )
        else:
            messages.error(request, "action: choose merge, keep both or supersede.")
            return back
    except ValidationFailed as exc:
        messages.error(request, exc.summary())
        return back
    forget_counts(namespace.name)
    return back


def _requested(request: HttpRequest) -> tuple[str, str]:
    """A row's button sends "action:memory id"; the combined-text form sends action and keep."""
    do = request.POST.get("do", "")
    if do:
        action, _, chosen = do.partition(":")
        return action, chosen
    return request.POST.get("action", ""), request.POST.get("keep", "")
