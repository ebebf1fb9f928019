"""Reads of the causal edges a search follows: the graph walk's edges and the successors of
ended memories that match the query (the `contradicts` edges among the results come with
their payload, apps/search/response.py).

Plain SQL rather than the ORM: these run on every search, and building the queryset cost
more CPU than PostgreSQL spent answering it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from apps.memories.models import CausalEdge, Relation
from apps.vectors.nearest import vector_literal

# Raw SQL reads go where the router sends reads (the replica, when one is configured).
from memoryhub.replica.routing import read_connection as connection

from ..scope import MEMORY, Scope
from . import namespace_vectors
from .namespace_vectors import Edge

__all__ = ["EDGES_TOUCHING", "Edge", "fetch_edges", "successors_of_ended"]

EDGE = CausalEdge._meta.db_table

# Same rows and order as CausalEdge.objects.filter(namespace_id=...).touching(ids).
EDGES_TOUCHING = (
    f"SELECT source_id, target_id, relation, strength FROM {EDGE} "
    "WHERE namespace_id = %s AND (source_id = ANY(%s::uuid[]) OR target_id = ANY(%s::uuid[])) "
    "ORDER BY created_at DESC"
)


def fetch_edges(
    namespace_id: int, ids: Iterable[str], depth: int, scope: Scope | None = None
) -> list[Edge]:
    """Edges within `depth` hops of `ids` (one query per hop; none for the search's `scope`
    when the process keeps its namespace: namespace_vectors.edges_touching)."""
    seen: set[str] = set()
    frontier = set(map(str, ids))
    edges: dict[tuple[Any, ...], Edge] = {}
    for _ in range(depth):
        if not frontier:
            break
        rows = namespace_vectors.edges_touching(scope, frontier) if scope is not None else None
        if rows is None:
            with connection.cursor() as cursor:
                cursor.execute(EDGES_TOUCHING, [namespace_id, list(frontier), list(frontier)])
                rows = cursor.fetchall()
        seen |= frontier
        frontier = set()
        for s, t, rel, strength in rows:
            s, t = str(s), str(t)
            edges[(s, t, rel)] = (s, t, rel, float(strength))
            frontier |= {s, t} - seen
    return list(edges.values())


def successors_of_ended(
    scope: Scope, vector: np.ndarray, limit: int, min_similarity: float
) -> list[tuple[str, float]]:
    """(successor id, best cosine of a memory it superseded), best first, over the memories of
    the namespace that ended by the scope's moment and match at `min_similarity` or more. A
    namespace the process keeps says whether any has ended: none, no statement."""
    if namespace_vectors.any_ended(scope) is False:
        return []
    with connection.cursor() as cursor:
        # The ended memories first (the partial index memory_ns_ended), then their links
        # through the edge_target index: never a scan of every namespace's links.
        cursor.execute(
            f"""
            WITH ended AS MATERIALIZED (
                SELECT m.id, 1 - (m.embedding <=> %s::vector) AS similarity
                  FROM {MEMORY} m
                 WHERE m.namespace_id = %s AND m.valid_until IS NOT NULL
                   AND m.valid_until <= %s AND NOT m.archived AND m.review = 'approved'
                   AND m.embedding IS NOT NULL)
            SELECT e.source_id::text, max(ended.similarity) AS similarity
              FROM ended JOIN {EDGE} e ON e.target_id = ended.id AND e.relation = %s
             WHERE ended.similarity >= %s
             GROUP BY e.source_id
             ORDER BY similarity DESC
             LIMIT %s
            """,
            [
                vector_literal(vector),
                scope.namespace_id,
                scope.valid_at,
                Relation.SUPERSEDES.value,
                min_similarity,
                limit,
            ],
        )
        return [(k, float(s)) for k, s in cursor.fetchall()]
