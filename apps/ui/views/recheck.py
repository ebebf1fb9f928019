"""The Re-check queue: memories whose basis was superseded, deleted or edited.

Per row: confirm it still holds (a queue decision; the banner's Undo, or the memory's history,
takes it back), edit it, write what supersedes it, or archive it. Each goes through the write
services, so each is a revision the memory's history can undo.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from apps.core.exceptions import ValidationFailed
from apps.memories import services
from apps.memories.browse import memory_page
from apps.memories.models import Memory, Namespace
from apps.queues.recheck import recheck_confirm, recheck_memories

from ..templatetags.stale_nav import forget_counts
from ..view_permissions import Action, can, namespace_view
from .common import uuids, writer

PAGE_SIZE = 50


@namespace_view(Action.VIEW)
def recheck_page(request: HttpRequest, namespace: Namespace) -> HttpResponse:
    memories = recheck_memories(namespace=namespace)
    page = memory_page(memories, sort="newest", cursor=request.GET.get("cursor"), size=PAGE_SIZE)
    context = {
        "namespace": namespace,
        "page": page,
        "undo": _undo_banner(request, namespace),
        "can_change": can(request.user, namespace, Action.CHANGE),
    }
    return render(request, "ui/recheck/page.html", context)


def _undo_banner(request: HttpRequest, namespace: Namespace) -> dict | None:
    """After a confirmation the page offers its undo (the history's undo of that decision)."""
    memory_ids, revision = uuids([request.GET.get("confirmed", "")]), request.GET.get("revision")
    if not memory_ids or not (revision or "").isdigit():
        return None
    memory = Memory.objects.filter(namespace=namespace, pk=memory_ids[0]).first()
    if memory is None:
        return None
    url = reverse("ui:undo_change", kwargs={"memory_id": memory.pk, "revision_id": int(revision)})
    return {"memory": memory, "url": url}


@namespace_view(Action.CHANGE)
@require_POST
def recheck_act(request: HttpRequest, namespace: Namespace) -> HttpResponse:
    back = reverse("ui:recheck", kwargs={"namespace": namespace.name})
    action, _, key = request.POST.get("row", "").partition(":")
    ids = uuids([key])
    memory = Memory.objects.filter(namespace=namespace, pk__in=ids).first()
    if action not in ("confirm", "archive") or memory is None:
        messages.error(request, "row: choose confirm or archive on a memory of this namespace.")
        return redirect(back)
    try:
        if action == "confirm":
            revision = recheck_confirm(memory=memory, **writer(request))
            back += f"?confirmed={memory.pk}&revision={revision.pk}"
            messages.success(request, f"Confirmed: “{memory.display_title[:80]}” still holds.")
        else:
            services.memory_archive(memory=memory, **writer(request))
            messages.success(
                request,
                f"Archived “{memory.display_title[:80]}” (undo from its history: unarchive).",
            )
    except ValidationFailed as exc:
        messages.error(request, exc.summary())
    forget_counts(namespace.name)
    return redirect(back)
