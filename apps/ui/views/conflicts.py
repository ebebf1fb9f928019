"""The conflicts queue: memories joined by a `contradicts` link, and pairs that searches flagged
as contradicting when they returned both (recorded on QueryLog, read here), possible updates
noticed when a memory was written (one click supersedes the older), and new memories that
negate a stored one (contradictions: no supersede is offered). Actions: keep one (the other is
superseded and archived), edit either memory, or mark the conflict resolved with a note; a
constitutional memory is replaced only with the confirmation box ticked. Memory changes are
revisions; a decided conflict does not come back.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from apps.core.exceptions import ValidationFailed
from apps.memories.models import Memory, Namespace
from apps.queues import services
from apps.queues.selectors import OpenConflicts, is_open_conflict

from ..templatetags.stale_nav import forget_counts
from ..view_permissions import Action, can, namespace_view
from .common import page_of, uuids, writer

PAGE_SIZE = 20


@namespace_view(Action.VIEW)
def conflicts_page(request: HttpRequest, namespace: Namespace) -> HttpResponse:
    page = page_of(request, OpenConflicts(namespace), PAGE_SIZE)
    rows = []
    for conflict in page:
        # Plain texts side by side: contradicting memories rarely share enough words for a
        # word diff to help reading them.
        left, right = [("equal", conflict.first.content)], [("equal", conflict.second.content)]
        rows.append({"conflict": conflict, "left": left, "right": right})
    context = {
        "namespace": namespace,
        "rows": rows,
        "page": page,
        "can_change": can(request.user, namespace, Action.CHANGE),
    }
    return render(request, "ui/conflicts/page.html", context)


@namespace_view(Action.CHANGE)
@require_POST
def conflicts_act(request: HttpRequest, namespace: Namespace) -> HttpResponse:
    back = redirect("ui:conflicts", namespace=namespace.name)
    # A form in place (the new memory's update warning) comes back to its own page.
    there = request.POST.get("next", "")
    if url_has_allowed_host_and_scheme(there, {request.get_host()}, request.is_secure()):
        back = redirect(there)
    ids = uuids([request.POST.get("first", ""), request.POST.get("second", "")])
    pair = list(Memory.objects.filter(namespace=namespace, pk__in=ids)) if len(ids) == 2 else []
    if len(pair) != 2 or not is_open_conflict(namespace=namespace, first=pair[0], second=pair[1]):
        raise Http404("No such open conflict in this namespace.")
    first, second = pair
    action, _, keep_id = request.POST.get("do", "").partition(":")
    note = request.POST.get("note", "")
    confirmed = request.POST.get("confirm_constitutional") == "1"
    try:
        if action == "keep":
            if keep_id not in (str(first.pk), str(second.pk)):
                raise ValidationFailed({"keep": "Choose one of the two memories."})
            keep, other = (first, second) if keep_id == str(first.pk) else (second, first)
            services.conflict_keep_one(
                keep=keep,
                other=other,
                note=note,
                confirm_constitutional=confirmed,
                **writer(request),
            )
            messages.success(request, "Kept one; the other is superseded and archived.")
        elif action == "supersede":
            if keep_id not in (str(first.pk), str(second.pk)):
                raise ValidationFailed({"newer": "Choose one of the two memories."})
            newer, older = (first, second) if keep_id == str(first.pk) else (second, first)
            services.conflict_supersede(
                newer=newer,
                older=older,
                note=note,
                confirm_constitutional=confirmed,
                **writer(request),
            )
            messages.success(
                request, "Superseded: the older memory's validity ended; it stays in history."
            )
        elif action == "resolve":
            services.conflict_resolve(first=first, second=second, note=note, **writer(request))
            messages.success(request, "Marked resolved; this conflict will not come back.")
        else:
            messages.error(request, "action: choose keep one or mark resolved.")
            return back
    except ValidationFailed as exc:
        messages.error(request, exc.summary())
        return back
    forget_counts(namespace.name)
    return back
