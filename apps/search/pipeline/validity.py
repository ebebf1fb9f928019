"""Search that respects time: what a superseded memory's match is worth now.

The candidate queries only see memories valid at the search's moment (Scope.where), so a
superseded fact never comes back as current. Where the old fact matches the question better
than its successor does ("What do we use for CI?" against "Our CI runs on Jenkins."), the
match is not lost: `successors` finds the ended memories closest to the query and hands their
successors over as a strategy list of their own, scored by the old memory's cosine. The ended
memories are few and sit in a small partial index (memory_ns_ended), so a namespace with
none pays one empty index probe.
"""

from __future__ import annotations

import numpy as np

from apps.memories.models import CausalEdge, Relation
from apps.memories.nearest import vector_literal
from memoryhub.db_router import read_connection as connection

from .scope import MEMORY, Scope

STRATEGY = "successor"
EDGE = CausalEdge._meta.db_table
MIN_SIMILARITY = 0.3  # the semantic strategy's floor


def successors(scope: Scope, vector: np.ndarray, limit: int) -> list[tuple[str, float]]:
    """(successor id, best cosine of a memory it superseded), best first, for the ended
    memories of the namespace; the caller keeps those that pass the scope."""
    if scope.valid_at is None:
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
                   AND m.valid_until <= %s AND NOT m.archived AND m.embedding IS NOT NULL)
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
                MIN_SIMILARITY,
                limit,
            ],
        )
        return [(k, float(s)) for k, s in cursor.fetchall()]
