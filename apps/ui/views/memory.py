"""The memory page: every field, edges with link/unlink, neighbours, chunks, recent searches."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.db.models import Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from apps.core.exceptions import PermissionDenied, ValidationFailed
from apps.core.values import text_problem
from apps.history.conf import history_settings
from apps.memories import services
from apps.memories.browse import document_chunks, memory_edges, similar_memories
from apps.memories.models import CausalEdge, Memory
from apps.memories.supersession import validity_chain
from apps.queues.selectors import noticed_for
from apps.search.models import QueryLog
from apps.search.services import search

from ..forms import LinkForm
from ..view_permissions import Action, can, memory_view
from .common import writer
from .history import history_rows

HISTORY_ON_PAGE = 5

SIMILAR_MIN = 0.3  # below this cosine similarity a "similar" memory is noise


@memory_view(Action.VIEW)
def memory_page(request: HttpRequest, memory: Memory) -> HttpResponse:
    outgoing, incoming = memory_edges(memory)
    threshold = settings.MEMORY_NEAR_DUPLICATE_SIMILARITY
    similar = [
        {"memory": m, "similarity": s, "near_duplicate": s >= threshold}
        for m, s in similar_memories(memory)
        if s >= SIMILAR_MIN
    ]
    searches = list(
        QueryLog.objects.filter(
            namespace_id=memory.namespace_id, results__contains=[{"id": str(memory.pk)}]
        )
        .only("id", "query", "mode", "created_at", "result_feedback")
        .order_by("-created_at")[:10]
    )
    context = {
        "memory": memory,
        "namespace": memory.namespace,
        "tags": list(memory.tags.values_list("name", flat=True)),
        "outgoing": outgoing,
        "incoming": incoming,
        "similar": similar,
        "chunks": document_chunks(memory),
        "searches": searches,
        "can_change": can(request.user, memory.namespace, Action.CHANGE),
        "link_form": LinkForm(),
        "history": history_rows(memory, HISTORY_ON_PAGE),
        "timeline": validity_chain(memory, [*outgoing, *incoming]),
        "noticed": [] if memory.archived else noticed_for(memory),
    }
    return render(request, "ui/memory/detail.html", context)


@memory_view(Action.VIEW)
def chunks_partial(request: HttpRequest, memory: Memory) -> HttpResponse:
    return render(request, "ui/browse/partials/chunks.html", {"chunks": document_chunks(memory)})


@memory_view(Action.CHANGE)
def link_candidates(request: HttpRequest, memory: Memory) -> HttpResponse:
    """htmx: memories of the same namespace matching the text typed in the link box."""
    text = request.GET.get("q", "").strip()
    found, problem = [], None
    if len(text) > settings.SEARCH_QUERY_MAX_CHARS:
        problem = f"q: at most {settings.SEARCH_QUERY_MAX_CHARS} characters."
    elif text_problem(text):
        problem = f"q: {text_problem(text)}"
    elif text:
        response = search(namespace=memory.namespace, query=text, limit=8, log=False)
        found = [m for m in response.memories if m["id"] != str(memory.pk)]
    context = {"found": found, "memory": memory, "problem": problem}
    return render(
        request,
        "ui/memory/partials/link_candidates.html",
        context,
        status=400 if problem else 200,
    )


@memory_view(Action.CHANGE)
@require_POST
def link(request: HttpRequest, memory: Memory) -> HttpResponse:
    form = LinkForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Pick a memory and a relation. " + form.errors.as_text())
        return redirect("ui:memory", memory_id=memory.pk)
    target_id = form.cleaned_data["target"]
    other = Memory.objects.filter(namespace=memory.namespace, pk=target_id).first()
    if other is None:
        raise Http404("No such memory.")
    source, target = (memory, other) if form.cleaned_data["direction"] == "out" else (other, memory)
    try:
        services.edge_create(
            source=source, target=target, relation=form.cleaned_data["relation"], **writer(request)
        )
        messages.success(request, "Linked.")
    except ValidationFailed as exc:
        messages.error(request, exc.summary())
    return redirect("ui:memory", memory_id=memory.pk)


@memory_view(Action.CHANGE)
@require_POST
def unlink(request: HttpRequest, memory: Memory, edge_id: int) -> HttpResponse:
    edge = CausalEdge.objects.filter(Q(source=memory) | Q(target=memory), pk=edge_id).first()
    if edge is None:
        raise Http404("No such link.")
    services.edge_delete(edge=edge, **writer(request))
    messages.success(request, "Link removed.")
    return redirect("ui:memory", memory_id=memory.pk)


@memory_view(Action.CHANGE)
@require_POST
def archive(request: HttpRequest, memory: Memory) -> HttpResponse:
    archived = request.POST.get("archived", "1") == "1"
    try:
        services.memory_archive(
            memory=memory, archived=archived, **_confirmed(request), **writer(request)
        )
    except (ValidationFailed, PermissionDenied) as exc:
        messages.error(request, str(exc))
        return redirect("ui:memory", memory_id=memory.pk)
    messages.success(request, "Archived." if archived else "Restored from the archive.")
    return redirect("ui:memory", memory_id=memory.pk)


def _confirmed(request: HttpRequest) -> dict:
    """The owner's explicit box for a constitutional memory (apps/memories/constitutional.py)."""
    return {"confirm_constitutional": request.POST.get("confirm_constitutional") == "1"}


@memory_view(Action.CHANGE)
@require_POST
def delete(request: HttpRequest, memory: Memory) -> HttpResponse:
    namespace = memory.namespace
    try:
        services.memory_delete(memory=memory, **_confirmed(request), **writer(request))
    except (ValidationFailed, PermissionDenied) as exc:
        messages.error(request, str(exc))
        return redirect("ui:memory", memory_id=memory.pk)
    days = history_settings().trash_days
    messages.success(request, f"Deleted. It stays in the trash for {days} days.")
    return redirect("ui:browse", namespace=namespace.name)
