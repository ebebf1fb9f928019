"""The graph page: causal edges drawn with Cytoscape.js (static/vendor), data from a JSON view.

Whole namespace (linked memories, at most 500, the highest PageRank kept above that) or the
neighbourhood of one memory (depth 1 or 2). Node size is PageRank, colour the category, edge
style the relation. An editor drags one node onto another to link them: the page posts to
`graph_link`, which goes through the same link service as the memory page (a revision).
"""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST

from apps.core.exceptions import ValidationFailed
from apps.memories import services
from apps.memories.graph import MAX_NODES, namespace_graph, neighbourhood
from apps.memories.models import Category, Memory, Namespace, Relation

from ..forms import GraphForm, GraphLinkForm
from ..view_permissions import Action, can, memory_or_404, namespace_view
from .common import writer


def _choice(request: HttpRequest, namespace: Namespace) -> tuple[GraphForm, Memory | None]:
    form = GraphForm(request.GET or None)
    if request.GET and not form.is_valid():
        return form, None
    data = form.cleaned_data if request.GET else {}
    memory = None
    if data.get("memory"):
        memory = memory_or_404(request.user, data["memory"])
        if memory.namespace_id != namespace.pk:
            raise Http404("No such memory.")
    return form, memory


@namespace_view(Action.VIEW)
def graph_page(request: HttpRequest, namespace: Namespace) -> HttpResponse:
    form, memory = _choice(request, namespace)
    query = request.GET.urlencode() if form.is_bound and form.is_valid() else ""
    data_url = reverse("ui:graph_data", args=[namespace.name])
    context = {
        "namespace": namespace,
        "form": form,
        "memory": memory,
        "data_url": f"{data_url}?{query}" if query else data_url,
        "link_url": reverse("ui:graph_link", args=[namespace.name]),
        "can_change": can(request.user, namespace, Action.CHANGE),
        "categories": Category.values,
        "relations": Relation.values,
        "max_nodes": MAX_NODES,
    }
    return render(request, "ui/graph/page.html", context)


@namespace_view(Action.VIEW)
def graph_data(request: HttpRequest, namespace: Namespace) -> HttpResponse:
    form, memory = _choice(request, namespace)
    if form.is_bound and not form.is_valid():
        return JsonResponse({"errors": form.errors.get_json_data()}, status=400)
    data = form.cleaned_data if form.is_bound else {}
    if memory is not None:
        graph = neighbourhood(memory, depth=int(data.get("depth") or 1))
    else:
        graph = namespace_graph(namespace, include_unlinked=bool(data.get("unlinked")))
    payload = graph.as_json()
    template = reverse("ui:memory", args=["00000000-0000-0000-0000-000000000000"])
    payload["memory_url"] = template.replace("00000000-0000-0000-0000-000000000000", "{id}")
    return JsonResponse(payload)


@namespace_view(Action.CHANGE)
@require_POST
def graph_link(request: HttpRequest, namespace: Namespace) -> HttpResponse:
    """Link two memories of the namespace (the drag on the graph page); JSON in and out."""
    form = GraphLinkForm(request.POST)
    if not form.is_valid():
        errors = {k: [e["message"] for e in v] for k, v in form.errors.get_json_data().items()}
        return JsonResponse({"errors": errors}, status=400)
    data = form.cleaned_data
    found = {
        m.pk: m
        for m in Memory.objects.filter(namespace=namespace, pk__in=[data["source"], data["target"]])
    }
    missing = [name for name in ("source", "target") if data[name] not in found]
    if missing:
        errors = {name: ["No such memory in this namespace."] for name in missing}
        return JsonResponse({"errors": errors}, status=404)
    try:
        edge = services.edge_create(
            source=found[data["source"]],
            target=found[data["target"]],
            relation=data["relation"],
            **writer(request),
        )
    except ValidationFailed as exc:
        return JsonResponse({"errors": exc.errors}, status=400)
    return JsonResponse(
        {
            "edge": {
                "id": f"e{edge.pk}",
                "source": str(edge.source_id),
                "target": str(edge.target_id),
                "relation": edge.relation,
                "strength": edge.strength,
            }
        },
        status=201,
    )
