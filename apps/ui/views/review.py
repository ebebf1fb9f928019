"""The Review queue: memories the namespace's review policy holds until an editor approves
(as written, or edited first) or rejects them (to the trash). Approving many at once is one
click. Each is a revision: an approval is undone from the memory's history."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from apps.core.exceptions import PermissionDenied, ValidationFailed
from apps.memories.models import Namespace
from apps.queues import review

from ..templatetags.stale_nav import forget_counts
from ..view_permissions import Action, namespace_view
from .common import counted, uuids, writer

PAGE_SIZE = 50


@namespace_view(Action.CHANGE)
def review_page(request: HttpRequest, namespace: Namespace) -> HttpResponse:
    memories = list(review.pending_memories(namespace)[:PAGE_SIZE])
    written = review.writers([m.pk for m in memories])
    for memory in memories:
        memory.written = written.get(memory.pk)
    context = {
        "namespace": namespace,
        "memories": memories,
        "total": review.pending_count(namespace),
        "queue_counts_known": {},
    }
    return render(request, "ui/review/page.html", context)


@namespace_view(Action.CHANGE)
@require_POST
def review_act(request: HttpRequest, namespace: Namespace) -> HttpResponse:
    back = reverse("ui:review", kwargs={"namespace": namespace.name})
    action, _, key = request.POST.get("row", "").partition(":")
    try:
        if action == "bulk":
            ids = uuids(request.POST.getlist("selected"))
            done = review.memories_approve(namespace=namespace, ids=ids, **writer(request))
            approved = counted(done, "memory,memories")
            messages.success(request, f"Approved {approved}: found from now on.")
        else:
            _one(request, namespace, action, key)
    except (ValidationFailed, PermissionDenied) as exc:
        messages.error(request, str(exc))
    forget_counts(namespace.name)
    return redirect(back)


def _one(request: HttpRequest, namespace: Namespace, action: str, key: str) -> None:
    ids = uuids([key])
    memory = review.pending_memory(namespace, ids[0]) if ids else None
    if action not in ("approve", "edit", "reject") or memory is None:
        raise ValidationFailed({"row": "Choose approve, edit or reject on a waiting memory."})
    title = memory.display_title[:80]
    if action == "reject":
        review.memory_reject(memory=memory, **writer(request))
        messages.success(request, f"Rejected “{title}”: it is in the trash.")
        return
    content = request.POST.get(f"content-{memory.pk}") if action == "edit" else None
    review.memory_approve(memory=memory, content=content, **writer(request))
    edited = " (edited)" if content is not None else ""
    messages.success(
        request, f"Approved “{title}”{edited}: found from now on. Undo from its history."
    )
