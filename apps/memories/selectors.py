"""Reads of memories, edges, tags and namespaces that the interfaces list (REST, and the UI).

Each read takes the principal and applies `restrict()`, so a caller cannot forget the scope;
`namespace` narrows further to one namespace the caller has already resolved (and may see).
Each returns a queryset with its relations loaded, so a page costs a fixed number of queries.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Count, Q, QuerySet

from apps.core.permissions import Action

from .models import CausalEdge, Memory, Namespace, Tag


def memory_list(
    *,
    principal: Any,
    namespace: Namespace | None = None,
    archived: bool = False,
    tags: Iterable[str] = (),
    category: str = "",
    after: datetime | None = None,
    before: datetime | None = None,
    file_path: str = "",
) -> QuerySet[Memory]:
    """Memories newest first; `tags` matches any of them."""
    memories = Memory.objects.restrict(principal, Action.VIEW)
    if namespace is not None:
        memories = memories.in_namespace(namespace)
    memories = (
        memories.filter(archived=archived)
        .with_tags(tags)
        .in_categories([category])
        .created_between(after, before)
    )
    if file_path:
        memories = memories.filter(file_path=file_path)
    return (
        memories.select_related("namespace").prefetch_related("tags").order_by("-created_at", "id")
    )


def edge_list(
    *,
    principal: Any,
    namespace: Namespace | None = None,
    memory: Any = None,
    relation: str = "",
) -> QuerySet[CausalEdge]:
    """Edges newest first; `memory` keeps those touching that memory (either end)."""
    edges = CausalEdge.objects.restrict(principal, Action.VIEW)
    if namespace is not None:
        edges = edges.in_namespace(namespace)
    if memory:
        edges = edges.filter(Q(source_id=memory) | Q(target_id=memory))
    if relation:
        edges = edges.filter(relation=relation)
    return edges.select_related("namespace").order_by("-created_at", "id")


def tag_counts(*, namespaces: Sequence[Namespace]) -> QuerySet:
    """{"name", "count"} rows: tags of the live memories of `namespaces`, by name."""
    return (
        Tag.objects.filter(memories__namespace__in=namespaces, memories__archived=False)
        .annotate(count=Count("memories", distinct=True))
        .order_by("name")
        .values("name", "count")
    )


@dataclass(frozen=True)
class NamespaceSummary:
    name: str
    description: str
    memory_count: int
    writable: bool


def namespace_summaries(*, principal: Any) -> list[NamespaceSummary]:
    """The namespaces the principal may see, with live-memory counts and whether it may write."""
    namespaces = list(Namespace.objects.restrict(principal, Action.VIEW).order_by("name"))
    writable = set(
        Namespace.objects.restrict(principal, Action.CHANGE).values_list("pk", flat=True)
    )
    counts = dict(
        Memory.objects.filter(namespace__in=namespaces, archived=False)
        .values_list("namespace")
        .annotate(n=Count("id"))
        .order_by()
    )
    return [
        NamespaceSummary(
            name=ns.name,
            description=ns.description,
            memory_count=counts.get(ns.pk, 0),
            writable=ns.pk in writable,
        )
        for ns in namespaces
    ]


def memory_stats(*, namespaces: Sequence[Namespace]) -> dict[int, dict[str, int]]:
    """{namespace id: {"memories", "archived", "tags", "edges"}} for namespaces with any."""
    memories = count_by_namespace(
        Memory.objects.filter(namespace__in=namespaces),
        n_memories=Count("id", distinct=True, filter=Q(archived=False)),
        n_archived=Count("id", distinct=True, filter=Q(archived=True)),
        n_tags=Count("tags", distinct=True, filter=Q(archived=False)),
    )
    edges = count_by_namespace(
        CausalEdge.objects.filter(namespace__in=namespaces), n_edges=Count("id")
    )
    return {
        ns.pk: {
            "memories": 0,
            "archived": 0,
            "tags": 0,
            "edges": 0,
            **memories.get(ns.pk, {}),
            **edges.get(ns.pk, {}),
        }
        for ns in namespaces
    }


def count_by_namespace(queryset: QuerySet, **aggregates) -> dict[int, dict[str, int]]:
    """{namespace id: {name: value}}; aggregate names carry an "n_" prefix so they never
    shadow a model field (which would turn a FILTER clause into an aggregate of an aggregate)."""
    rows = queryset.values("namespace").annotate(**aggregates).order_by()
    return {row["namespace"]: {k[2:]: row[k] for k in aggregates} for row in rows}
