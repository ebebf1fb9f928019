"""The browse list of a namespace: filters, sorting, keyset pages, bulk actions."""

from __future__ import annotations

from django.contrib import messages
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST

from apps.core.exceptions import PermissionDenied, ValidationFailed
from apps.memories import services
from apps.memories.browse import listed, memory_page
from apps.memories.models import Memory, Namespace

from ..forms import BrowseForm, BulkForm
from ..view_permissions import Action, can, namespace_view
from .common import counted, pick, safe_next, uuids, writer

PAGE_SIZE = 50


def filtered_memories(namespace: Namespace, data: dict):
    """The namespace's memories under the browse filters (BrowseForm's cleaned data); the
    export of a selection reads the same."""
    qs = Memory.objects.filter(namespace=namespace)
    archived = data.get("archived") or "active"
    if archived != "all":
        qs = qs.filter(archived=archived == "archived")
    validity = data.get("validity") or "current"
    if validity == "current":
        qs = qs.valid_at(timezone.now())
    elif validity == "superseded":
        qs = qs.ended_by(timezone.now())
    if data.get("category"):
        qs = qs.filter(category=data["category"])
    if data.get("tier"):
        qs = qs.filter(tier=data["tier"])
    if data.get("tag"):
        qs = qs.filter(tags__name=data["tag"].strip().lower())
    if data.get("file_path"):
        qs = qs.filter(file_path__startswith=data["file_path"].strip())
    qs = qs.written_by(
        person=(data.get("person") or "").strip(),
        credential=(data.get("credential") or "").strip(),
        door=data.get("door") or "",
    )
    return qs.created_between(data.get("after"), data.get("before"))


@namespace_view(Action.VIEW)
def browse_page(request: HttpRequest, namespace: Namespace) -> HttpResponse:
    form = BrowseForm(request.GET or None)
    data = form.cleaned_data if form.is_valid() else {}
    page = memory_page(
        listed(filtered_memories(namespace, data)),
        sort=data.get("sort") or "newest",
        cursor=data.get("cursor") or None,
        size=PAGE_SIZE,
    )
    params = request.GET.copy()
    params.pop("cursor", None)
    context = {
        "namespace": namespace,
        "form": form,
        "page": page,
        "base_query": params.urlencode(),
        "can_change": can(request.user, namespace, Action.CHANGE),
        "bulk_form": BulkForm(),
    }
    template = pick(request, "ui/browse/page.html", "ui/browse/partials/table.html")
    return render(request, template, context)


@namespace_view(Action.CHANGE)
@require_POST
def bulk_action(request: HttpRequest, namespace: Namespace) -> HttpResponse:
    form = BulkForm(request.POST)
    back = safe_next(request, reverse("ui:browse", args=[namespace.name]))
    if not form.is_valid():
        messages.error(request, "Choose memories and an action. " + form.errors.as_text())
        return redirect(back)
    data = form.cleaned_data
    # Only ids of this namespace: anything else is silently not there.
    memories = list(Memory.objects.filter(namespace=namespace, pk__in=uuids(data["ids"])))
    who = writer(request)
    try:
        with transaction.atomic():
            count = _apply(data, memories, who)
    except ValidationFailed as exc:
        messages.error(request, exc.summary())
        return redirect(back)
    except PermissionDenied as exc:  # a constitutional memory among them, and no owner
        messages.error(request, str(exc))
        return redirect(back)
    messages.success(
        request, f"{data['action'].replace('_', ' ')}: {counted(count, 'memory,memories')}."
    )
    return redirect(back)


def _apply(data: dict, memories: list[Memory], who: dict) -> int:
    action = data["action"]
    if action in ("archive", "restore"):
        selected = Memory.objects.filter(pk__in=[m.pk for m in memories])
        services.memories_archive(memories=selected, archived=action == "archive", **who)
        return len(memories)
    for memory in memories:
        if action == "delete":
            services.memory_delete(memory=memory, **who)
        elif action == "tier":
            services.memory_update(memory=memory, tier=data["tier"], **who)
        else:
            tags = list(memory.tags.values_list("name", flat=True))
            tag = data["tag"].strip().lower()
            if action == "add_tag" and tag not in tags:
                services.memory_update(memory=memory, tags=[*tags, tag], **who)
            elif action == "remove_tag" and tag in tags:
                services.memory_update(memory=memory, tags=[t for t in tags if t != tag], **who)
    return len(memories)
