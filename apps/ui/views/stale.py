"""The stale queue: memories that decayed, scratch notes left lying, memories no search uses.

Actions (per row or on the ticked rows): archive, refresh (stability and last access reset),
promote one tier up. Each goes through the write services, so each is a revision.
"""

from __future__ import annotations

from django.contrib import messages
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from apps.core.exceptions import ValidationFailed
from apps.memories import services
from apps.memories.browse import memory_page
from apps.memories.models import Memory, Namespace, Tier
from apps.memories.selectors import STALE_REASONS, stale_counts, stale_memories, stale_settings

from ..templatetags.stale_nav import forget_counts
from ..view_permissions import Action, can, namespace_view
from .common import counted, safe_next, uuids, writer

PAGE_SIZE = 50
ACTIONS = ("archive", "refresh", "promote")
# One step up: scratch -> normal -> core -> constitutional (the top stays where it is).
PROMOTION = {Tier.SCRATCH: Tier.NORMAL, Tier.NORMAL: Tier.CORE, Tier.CORE: Tier.CONSTITUTIONAL}


@namespace_view(Action.VIEW)
def stale_page(request: HttpRequest, namespace: Namespace) -> HttpResponse:
    reason = request.GET.get("reason", "")
    if reason not in STALE_REASONS:
        reason = ""
    page = memory_page(
        stale_memories(namespace=namespace, reason=reason or None),
        sort="oldest",
        cursor=request.GET.get("cursor") or None,
        size=PAGE_SIZE,
    )
    counts = stale_counts(namespace=namespace)
    context = {
        "namespace": namespace,
        "page": page,
        "reason": reason,
        "reasons": STALE_REASONS,
        "counts": counts,
        "queue_counts_known": {"stale": counts["total"]},  # the navigation's count, not re-read
        "conf": stale_settings(),
        "base_query": f"reason={reason}" if reason else "",
        "can_change": can(request.user, namespace, Action.CHANGE),
    }
    return render(request, "ui/stale/page.html", context)


@namespace_view(Action.CHANGE)
@require_POST
def stale_act(request: HttpRequest, namespace: Namespace) -> HttpResponse:
    back = safe_next(request, reverse("ui:stale", args=[namespace.name]))
    action, ids = _requested(request)
    if action not in ACTIONS:
        messages.error(request, "action: choose archive, refresh or promote.")
        return redirect(back)
    # Only ids of this namespace: anything else is silently not there.
    selected = Memory.objects.filter(namespace=namespace, pk__in=ids)
    if not ids or not selected.exists():
        messages.error(request, "ids: tick at least one memory of this namespace.")
        return redirect(back)
    who = writer(request)
    try:
        with transaction.atomic():
            count = _apply(action, selected, who)
    except ValidationFailed as exc:
        messages.error(request, exc.summary())
        return redirect(back)
    forget_counts(namespace.name)
    done = {"archive": "Archived", "refresh": "Refreshed", "promote": "Promoted"}[action]
    messages.success(request, f"{done}: {counted(count, 'memory,memories')}.")
    return redirect(back)


def _requested(request: HttpRequest) -> tuple[str, list[str]]:
    """A row's own button sends "action:id"; the bulk bar sends an action and ticked ids."""
    row = request.POST.get("row", "")
    if row:
        action, _, key = row.partition(":")
        return action, uuids([key])
    return request.POST.get("action", ""), uuids(request.POST.getlist("ids"))


def _apply(action: str, selected, who: dict) -> int:
    if action == "archive":
        return services.memories_archive(memories=selected, archived=True, **who)
    if action == "refresh":
        return services.memories_refresh(memories=selected, **who)
    count = 0
    for memory in selected.select_for_update():
        higher = PROMOTION.get(memory.tier)
        if higher:
            services.memory_update(memory=memory, tier=higher.value, **who)
            count += 1
    return count
