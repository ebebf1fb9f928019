"""Reads of searches and their feedback, for REST, MCP and the UI."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connection
from django.db.models import Count, Q
from django.utils import timezone

from apps.access.permissions import Action, Principal
from apps.access.scoping import require
from apps.core.exceptions import NotFound
from apps.memories.models import Memory, Namespace
from apps.memories.selectors import count_by_namespace, memory_stats
from apps.vectors.embeddings import embed_texts

from . import querylog
from .models import MissedQueryDismissal, MissedQueryVector, QueryLog
from .pipeline import confidence, why
from .pipeline.reads import chains as chain_reads
from .pipeline.scope import Scope


def query_log_for(
    principal: Principal, query_log_id: int, *, action: Action = Action.VIEW
) -> QueryLog:
    """A logged search the principal can see (feedback is given against it).

    The log row is written just after the search returns (querylog.py), so feedback may arrive
    first: on a miss, wait for pending writes once and look again.
    """
    logs = QueryLog.objects.restrict(principal, Action.VIEW).filter(pk=query_log_id)
    log: QueryLog | None = logs.select_related("namespace").first()
    if log is None:
        querylog.flush()
        log = logs.select_related("namespace").first()
    if log is None:
        raise NotFound(f"Search {query_log_id} does not exist or you cannot access it.")
    require(principal, log.namespace, action)
    return log


def namespace_stats(*, namespaces: Sequence[Namespace]) -> list[dict[str, Any]]:
    """Per namespace: memory, tag and edge counts, and how searches went (with feedback, with
    an evidence gap)."""
    stored = memory_stats(namespaces=namespaces)
    searches = count_by_namespace(
        QueryLog.objects.filter(namespace__in=namespaces),
        n_searches=Count("id"),
        n_searches_with_feedback=Count("id", filter=Q(feedback_at__isnull=False)),
        n_evidence_gaps=Count("id", filter=Q(evidence_gap=True)),
    )
    empty = {"searches": 0, "searches_with_feedback": 0, "evidence_gaps": 0}
    return [
        {"namespace": ns.name, **stored[ns.pk], **empty, **searches.get(ns.pk, {})}
        for ns in namespaces
    ]


# --- Missed searches (the curator's desk) ----------------------------------------------------


@dataclass(frozen=True)
class EvidenceGapModel:
    """The evidence-gap model's weights (pipeline/confidence.py), for the explain view."""

    intercept: float
    coefficients: dict[str, float]


def evidence_gap_model() -> EvidenceGapModel:
    return EvidenceGapModel(confidence.INTERCEPT, dict(confidence.COEFFICIENTS))


@dataclass(frozen=True)
class MissedSettings:
    similarity: float
    max_queries: int
    window_days: int


def missed_settings() -> MissedSettings:
    return MissedSettings(
        similarity=settings.MISSED_SIMILARITY,
        max_queries=settings.MISSED_MAX_QUERIES,
        window_days=settings.MISSED_WINDOW_DAYS,
    )


@dataclass
class MissedGroup:
    """Similar missed queries: each {"key", "query", "misses", "first_at", "last_at"}."""

    queries: list[dict[str, Any]]

    @property
    def misses(self) -> int:
        return sum(q["misses"] for q in self.queries)

    @property
    def last_at(self) -> datetime:
        last: datetime = max(q["last_at"] for q in self.queries)
        return last

    @property
    def lead(self) -> str:
        return str(self.queries[0]["query"])

    @property
    def keys(self) -> list[str]:
        return [q["key"] for q in self.queries]


# Per distinct query (trimmed, lower case) in the window: how often it missed (evidence gap or
# no result) and when. A query whose latest search found its answer is no longer missed, and a
# dismissed one never is. One pass over the namespace's logs in the window, read from the
# (namespace, created_at) INCLUDE (missed, query) index alone (`missed` is a stored column),
# grouped first by the exact text (a cheap hash) and only then by the trimmed lower-case key,
# so lower() and the dismissal check run once per distinct text, not once per search.
_MISSED_SQL = """
    SELECT key, max(query), sum(misses)::bigint, min(first_miss), max(last_miss)
    FROM (
        SELECT lower(btrim(query)) AS key, query, count(*) FILTER (WHERE missed) AS misses,
               min(created_at) FILTER (WHERE missed) AS first_miss,
               max(created_at) FILTER (WHERE missed) AS last_miss, max(created_at) AS last_any
        FROM {log} WHERE namespace_id = %(ns)s AND created_at >= %(since)s
        GROUP BY query
    ) AS q
    WHERE key <> ''
    GROUP BY key
    HAVING max(last_miss) = max(last_any) AND NOT EXISTS (
        SELECT 1 FROM {dismissed} AS d WHERE d.namespace_id = %(ns)s AND d.query_key = q.key
    )
    ORDER BY max(last_miss) DESC
    LIMIT %(limit)s
"""


def missed_queries(*, namespace: Namespace, now: datetime | None = None) -> list[dict[str, Any]]:
    """The newest distinct missed queries (up to MISSED_MAX_QUERIES), newest miss first."""
    conf = missed_settings()
    sql = _MISSED_SQL.format(
        log=QueryLog._meta.db_table, dismissed=MissedQueryDismissal._meta.db_table
    )
    params: dict[str, Any] = {
        "ns": namespace.pk,
        "since": (now or timezone.now()) - timedelta(days=conf.window_days),
        "limit": conf.max_queries,
    }
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    names = ("key", "query", "misses", "first_at", "last_at")
    return [dict(zip(names, row, strict=True)) for row in rows]


def missed_vectors(*, namespace: Namespace, rows: list[dict[str, Any]]) -> dict[str, object]:
    """Embedding per missed query key: the one the search stored when it missed, else computed
    now (one batch) and stored for the next time."""
    keys = [r["key"] for r in rows]
    found = dict(
        MissedQueryVector.objects.filter(namespace=namespace, query_key__in=keys).values_list(
            "query_key", "embedding"
        )
    )
    unknown = [r for r in rows if r["key"] not in found]
    if unknown:
        vectors = embed_texts([r["query"] for r in unknown])
        fresh = [
            MissedQueryVector(namespace=namespace, query_key=r["key"], embedding=v)
            for r, v in zip(unknown, vectors, strict=True)
        ]
        MissedQueryVector.objects.bulk_create(fresh, ignore_conflicts=True)
        found.update((m.query_key, m.embedding) for m in fresh)
    return found


def missed_groups(
    *,
    namespace: Namespace,
    now: datetime | None = None,
    rows: Iterable[dict[str, Any]] | None = None,
) -> list[MissedGroup]:
    """Missed queries (`rows` of missed_queries, read when not given) grouped by meaning, most
    missed group first.

    Greedy: queries in order of how often they missed; each joins the first group whose lead
    query's embedding has cosine >= MISSED_SIMILARITY with its own, or leads a new group."""
    rows = list(rows) if rows is not None else missed_queries(namespace=namespace, now=now)
    if not rows:
        return []
    rows.sort(key=lambda r: (-r["misses"], -r["last_at"].timestamp()))
    known = missed_vectors(namespace=namespace, rows=rows)
    vectors: np.ndarray = np.asarray([known[r["key"]] for r in rows], dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = vectors / np.where(norms == 0, 1.0, norms)
    threshold = missed_settings().similarity
    groups: list[MissedGroup] = []
    leads: list[int] = []
    for i, row in enumerate(rows):
        if leads:
            similarity = vectors[leads] @ vectors[i]
            best = int(np.argmax(similarity))
            if similarity[best] >= threshold:
                groups[best].queries.append(row)
                continue
        leads.append(i)
        groups.append(MissedGroup(queries=[row]))
    groups.sort(key=lambda g: (-g.misses, -g.last_at.timestamp()))
    return groups


def missed_count(*, namespace: Namespace) -> int:
    """How many distinct queries wait in the missed queue (for the navigation; no embedding)."""
    return len(missed_queries(namespace=namespace))


def missed_dismiss(*, namespace: Namespace, keys: Sequence[str], by: str = "") -> int:
    """Set these queries (trimmed, lower case keys) aside for good; returns how many were new."""
    cleaned = {k.strip().lower() for k in keys if k and k.strip()}
    before = MissedQueryDismissal.objects.filter(namespace=namespace).count()
    MissedQueryDismissal.objects.bulk_create(
        [MissedQueryDismissal(namespace=namespace, query_key=k, dismissed_by=by) for k in cleaned],
        ignore_conflicts=True,
    )
    return MissedQueryDismissal.objects.filter(namespace=namespace).count() - before


def missed_dismissed(*, namespace: Namespace, limit: int = 20) -> list[MissedQueryDismissal]:
    """The namespace's newest dismissals, for the queue page's "bring back" list."""
    return list(MissedQueryDismissal.objects.filter(namespace=namespace)[:limit])


def missed_undismiss(*, namespace: Namespace, keys: Sequence[str]) -> int:
    """Undo a dismissal: these queries may come back to the queue; returns how many did."""
    cleaned = {k.strip().lower() for k in keys if k and k.strip()}
    found = MissedQueryDismissal.objects.filter(namespace=namespace, query_key__in=cleaned)
    return found.delete()[0]


def memory_chain(*, memory: Memory, direction: str = why.CAUSE) -> list[dict[str, Any]]:
    """The causal chain from one memory (memory_why with a memory_id): each memory (id,
    title) with the link from the one before it, as a search's `path`; empty when the memory
    has no link in `direction` ("cause": why it holds, "effect": what followed from it)."""
    scope = Scope(namespace_id=memory.namespace_id)
    seed = str(memory.pk)
    edges = chain_reads.chain_edges(scope, [seed], why.MAX_DEPTH)
    chain = why.best_chain({seed: 1.0}, edges, direction) if edges else None
    return why.path_payload(chain, chain_reads.titles(chain.ids) if chain else {})
