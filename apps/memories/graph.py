"""The causal graph as the graph page draws it: nodes (memories) and edges of one namespace.

Two views: a memory's neighbourhood (its links, and their links at depth 2), and the
namespace's linked memories. Both stop at MAX_NODES; above that the memories with the highest
PageRank are kept (the ones the graph says matter most), so a 400,000-memory namespace costs
what a small one does. Edges are those between the kept nodes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Q
from django.db.models.functions import Left

from .models import CausalEdge, Memory, Namespace
from .titles import shown_title

MAX_NODES = 500
NODE_FIELDS = ("id", "title", "snippet", "category", "pagerank_score", "archived", "tier")
MAX_EDGES_READ = 5000  # per step of a neighbourhood: a hub cannot make the page slow
LABEL_WIDTH = 48


@dataclass
class Graph:
    nodes: list[dict] = field(default_factory=list)
    edges: list[dict] = field(default_factory=list)
    # Memories the view would hold without the cap (the page says it was sampled).
    total: int = 0
    centre: str | None = None

    @property
    def sampled(self) -> bool:
        return self.total > len(self.nodes)

    def as_json(self) -> dict:
        return {
            "nodes": self.nodes,
            "edges": self.edges,
            "total": self.total,
            "sampled": self.sampled,
            "centre": self.centre,
        }


def namespace_graph(
    namespace: Namespace, *, include_unlinked: bool = False, limit: int = MAX_NODES
) -> Graph:
    """The namespace's memories that have a link (or all active ones), at most `limit`, the
    highest PageRank first."""
    memories = Memory.objects.filter(namespace=namespace)
    if include_unlinked:
        memories = memories.filter(archived=False)
    else:
        edges = CausalEdge.objects.filter(namespace=namespace)
        memories = memories.filter(
            Q(pk__in=edges.values("source_id")) | Q(pk__in=edges.values("target_id"))
        )
    total = memories.count()
    rows = list(_nodes(memories.order_by("-pagerank_score", "-id"))[:limit])
    return _graph(namespace, rows, total)


def neighbourhood(memory: Memory, *, depth: int = 1, limit: int = MAX_NODES) -> Graph:
    """`memory`, the memories linked to it and (depth 2) the memories linked to those."""
    depth = 2 if depth >= 2 else 1
    seen = {memory.pk}
    frontier = {memory.pk}
    for _ in range(depth):
        pairs = CausalEdge.objects.filter(
            Q(source_id__in=frontier) | Q(target_id__in=frontier), namespace_id=memory.namespace_id
        ).values_list("source_id", "target_id")[:MAX_EDGES_READ]
        reached = {end for pair in pairs for end in pair} - seen
        seen |= reached
        frontier = reached
        if not frontier:
            break
    total = len(seen)
    others = Memory.objects.filter(namespace_id=memory.namespace_id, pk__in=seen - {memory.pk})
    others = _nodes(others.order_by("-pagerank_score", "-id"))[: limit - 1]
    # every_state: the graph of a memory waiting for review, which only its editors open.
    centre = _nodes(Memory.every_state.filter(pk=memory.pk)).first()
    graph = _graph(memory.namespace, [centre, *others], total)
    graph.centre = str(memory.pk)
    return graph


# Ordered (-pagerank_score, -id): a backward read of the (namespace, pagerank_score, id) index,
# so the 500 kept nodes are found without sorting the namespace.


def _nodes(memories):
    return memories.annotate(snippet=Left("content", 200)).values(*NODE_FIELDS)


def _graph(namespace: Namespace, rows: list[dict], total: int) -> Graph:
    ids = [row["id"] for row in rows]
    top = max((row["pagerank_score"] for row in rows), default=0.0) or 1.0
    nodes = [
        {
            "id": str(row["id"]),
            "label": _label(row),
            "category": row["category"],
            "tier": row["tier"],
            "archived": row["archived"],
            "pagerank": row["pagerank_score"],
            # 0..1 relative to the largest PageRank drawn: the node's size.
            "weight": round(row["pagerank_score"] / top, 4),
        }
        for row in rows
    ]
    edges = [
        {
            "id": f"e{pk}",
            "source": str(source),
            "target": str(target),
            "relation": relation,
            "strength": strength,
        }
        for pk, source, target, relation, strength in CausalEdge.objects.filter(
            namespace=namespace, source_id__in=ids, target_id__in=ids
        )
        .order_by("id")
        .values_list("id", "source_id", "target_id", "relation", "strength")
    ]
    return Graph(nodes=nodes, edges=edges, total=total)


def _label(row: dict) -> str:
    text = shown_title(row["title"], row["snippet"])
    return text if len(text) <= LABEL_WIDTH else text[: LABEL_WIDTH - 1] + "…"
