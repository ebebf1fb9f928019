"""Reads of memories, edges, tags and namespaces that the interfaces list (REST, and the UI).

Each read takes the principal and applies `restrict()`, so a caller cannot forget the scope;
`namespace` narrows further to one namespace the caller has already resolved (and may see).
Each returns a queryset with its relations loaded, so a page costs a fixed number of queries.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import BooleanField, Count, ExpressionWrapper, Q, QuerySet
from django.utils import timezone

from apps.core.permissions import Action

from .models import Category, CausalEdge, Memory, Namespace, Tag


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
    person: str = "",
    credential: str = "",
    door: str = "",
) -> QuerySet[Memory]:
    """Memories newest first; `tags` matches any of them; person, credential (a token's or
    an app's name) and door filter by provenance."""
    memories = Memory.objects.restrict(principal, Action.VIEW)
    if namespace is not None:
        memories = memories.in_namespace(namespace)
    memories = (
        memories.filter(archived=archived)
        .with_tags(tags)
        .in_categories([category])
        .created_between(after, before)
        .written_by(person=person, credential=credential, door=door)
    )
    if file_path:
        memories = memories.filter(file_path=file_path)
    return (
        memories.select_related("namespace")
        .prefetch_related("tags", "recheck_marks")
        .order_by("-created_at", "id")
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


# --- Stale queue (the curator's desk) --------------------------------------------------------


@dataclass(frozen=True)
class StaleSettings:
    stability_below: float
    scratch_days: int
    unused_days: int


def stale_settings() -> StaleSettings:
    return StaleSettings(
        stability_below=settings.STALE_STABILITY_THRESHOLD,
        scratch_days=settings.STALE_SCRATCH_DAYS,
        unused_days=settings.STALE_UNUSED_DAYS,
    )


STALE_REASONS = ("decayed", "scratch", "unused")


def _stale_conditions(now: datetime, conf: StaleSettings) -> dict[str, Q]:
    """Why a memory is stale, as filters the database answers in one pass over the namespace.

    "unused": neither created nor returned by a search within the window (`last_accessed_at`
    is folded from the search log by the decay job, apps/search/jobs/access.py).

    A conversation turn is a record of what was said when it was said: it cannot stop holding,
    and age or a quiet year takes nothing from it, so it is never decayed or unused (an
    imported conversation from last year put every one of its turns in the queue). A note,
    a decision or a fact is knowledge that can go out of date: those are the queue's. A turn
    written as scratch is still an old scratch note."""
    unused_since = now - timedelta(days=conf.unused_days)
    knowledge = ~Q(category=Category.CONVERSATION)
    return {
        "decayed": knowledge & Q(stability__lt=conf.stability_below),
        "scratch": Q(tier="scratch", created_at__lt=now - timedelta(days=conf.scratch_days)),
        "unused": knowledge
        & Q(created_at__lt=unused_since)
        & (Q(last_accessed_at__isnull=True) | Q(last_accessed_at__lt=unused_since)),
    }


def stale_memories(
    *, namespace: Namespace, reason: str | None = None, now: datetime | None = None
) -> QuerySet[Memory]:
    """Active memories of `namespace` that are stale for `reason` (any reason when None), each
    annotated with `is_decayed`, `is_scratch`, `is_unused`. Unordered: page it with
    apps.memories.browse.memory_page (keyset on created_at, id)."""
    conditions = _stale_conditions(now or timezone.now(), stale_settings())
    wanted = [conditions[reason]] if reason in conditions else list(conditions.values())
    match = Q()
    for condition in wanted:
        match |= condition
    flags = {
        f"is_{name}": ExpressionWrapper(condition, output_field=BooleanField())
        for name, condition in conditions.items()
    }
    active = Memory.objects.filter(namespace=namespace, archived=False)
    return active.filter(match).annotate(**flags)


def stale_counts(*, namespace: Namespace, now: datetime | None = None) -> dict[str, int]:
    """{"total", "decayed", "scratch", "unused"} in one aggregate query (for the navigation)."""
    conditions = _stale_conditions(now or timezone.now(), stale_settings())
    anything = Q()
    for condition in conditions.values():
        anything |= condition
    aggregates = {"total": Count("id", filter=anything)}
    aggregates.update({name: Count("id", filter=c) for name, c in conditions.items()})
    return Memory.objects.filter(namespace=namespace, archived=False).aggregate(**aggregates)


def growth_by_category(*, namespace: Namespace, since: datetime, until: datetime) -> list[dict]:
    """Per UTC day of [since, until) and category: memories created that day and the running
    total of the namespace's memories of that category at the day's end (archived included),
    after a row per category for the day before the period (its total then, created 0).
    One query: GROUP BY day and category, a window sum over the days, plus what came before."""
    # "before" is all memories of a category minus those created since the period began:
    # the first count reads only the (namespace, category) index, the second only the period's
    # rows, so a namespace whose memories are mostly older than the period is not read whole.
    sql = """
        WITH recent AS (
            SELECT date_trunc('day', created_at AT TIME ZONE 'UTC') AS day, category,
                   created_at < %(until)s AS inside
            FROM memories_memory
            WHERE namespace_id = %(ns)s AND created_at >= %(since)s
        ), days AS (
            SELECT day, category, count(*) AS created FROM recent WHERE inside GROUP BY 1, 2
        ), everything AS (
            SELECT category, count(*) AS n FROM memories_memory
            WHERE namespace_id = %(ns)s GROUP BY 1
        ), later AS (
            SELECT category, count(*) AS n FROM recent GROUP BY 1
        ), before AS (
            SELECT category, everything.n - coalesce(later.n, 0) AS total
            FROM everything LEFT JOIN later USING (category)
            WHERE everything.n > coalesce(later.n, 0)
        )
        SELECT to_char(days.day, 'YYYY-MM-DD') AS day, days.category, days.created,
               coalesce(before.total, 0)
                 + sum(days.created) OVER (PARTITION BY days.category ORDER BY days.day)
                 AS total
        FROM days LEFT JOIN before USING (category)
        UNION ALL
        SELECT to_char(%(since)s::timestamptz AT TIME ZONE 'UTC' - interval '1 day', 'YYYY-MM-DD'),
               category, 0, total
        FROM before
        ORDER BY 1, 2
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, {"ns": namespace.pk, "since": since, "until": until})
        return [
            {"day": day, "category": category, "created": created, "total": int(total)}
            for day, category, created, total in cursor.fetchall()
        ]


def category_totals(*, namespace: Namespace) -> list[dict]:
    """How many memories of each category the namespace holds now (archived ones apart)."""
    return list(
        Memory.objects.filter(namespace=namespace)
        .values("category")
        .annotate(total=Count("id"), archived=Count("id", filter=Q(archived=True)))
        .order_by("-total", "category")
    )
