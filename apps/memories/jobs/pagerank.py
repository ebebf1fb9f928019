"""PageRank over causal edges, per namespace (SPEC section 6).

Graph: every memory of the namespace (archived ones too, so archiving never makes scores stale)
is a node. Each edge is a link weighted by its strength, pointing from source to target, except
`supersedes`, which points from the superseded memory to its replacement, so that the current
version collects the rank rather than the obsolete one. Parallel links between the same two
memories add up; zero-strength edges carry nothing.

Scores are exactly ten power-iteration steps x <- x·G from the uniform vector, where G is the
Google matrix (damping 0.85, uniform teleport, a node without outgoing weight spreads its rank
uniformly), the same G that networkx.google_matrix builds. They are probabilities: they sum to 1
over the namespace and a memory without incoming links, isolated ones included, gets the minimum.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from django.db import connection, transaction

from ..models import CausalEdge, Memory, Namespace, Relation

DAMPING = 0.85
ITERATIONS = 10
REVERSED_RELATIONS = frozenset({Relation.SUPERSEDES})


def pagerank_scores(
    n: int,
    sources: Sequence[int],
    targets: Sequence[int],
    weights: Sequence[float],
    *,
    damping: float = DAMPING,
    iterations: int = ITERATIONS,
) -> np.ndarray:
    """Power iteration over node indices 0..n-1 and weighted links sources[i] -> targets[i]."""
    if n == 0:
        return np.zeros(0)
    src = np.asarray(sources, dtype=np.int64)
    dst = np.asarray(targets, dtype=np.int64)
    w = np.asarray(weights, dtype=np.float64)
    keep = w > 0
    src, dst, w = src[keep], dst[keep], w[keep]
    out_weight = np.bincount(src, weights=w, minlength=n)
    dangling = out_weight == 0
    share = w / np.where(dangling, 1.0, out_weight)[src]  # row-normalized link weights
    x = np.full(n, 1.0 / n)
    for _ in range(iterations):
        flow = np.bincount(dst, weights=x[src] * share, minlength=n)
        x = damping * (flow + x[dangling].sum() / n) + (1.0 - damping) / n
    return x


def graph_links(edges: Sequence[tuple]) -> list[tuple]:
    """(source, target, relation, strength) edges -> (from, to, weight) links."""
    links = []
    for source, target, relation, strength in edges:
        if relation in REVERSED_RELATIONS:
            source, target = target, source
        links.append((source, target, float(strength)))
    return links


def pagerank_update(*, namespace: Namespace, **_options) -> dict:
    """Recompute and store the namespace's scores; returns how many memories changed."""
    with transaction.atomic():
        ids = list(
            Memory.objects.filter(namespace=namespace).order_by("id").values_list("id", flat=True)
        )
        edges = (
            CausalEdge.objects.filter(namespace=namespace)
            .order_by("source_id", "target_id", "relation")
            .values_list("source_id", "target_id", "relation", "strength")
        )
        index = {memory_id: i for i, memory_id in enumerate(ids)}
        links = [(index[s], index[t], w) for s, t, w in graph_links(list(edges))]
        scores = pagerank_scores(
            len(ids), [s for s, _, _ in links], [t for _, t, _ in links], [w for _, _, w in links]
        )
        updated = _store(namespace.pk, ids, scores)
    linked = len({i for s, t, _ in links for i in (s, t)})
    return {
        "memories": len(ids),
        "edges": len(links),
        "isolated": len(ids) - linked,
        "memories_updated": updated,
    }


def _store(namespace_id: int, ids: list, scores: np.ndarray) -> int:
    """One set-based UPDATE; rows already holding their score are left alone.

    The arrays travel as array literals (text): adapting thousands of UUID and float objects one
    by one costs more than the whole computation. repr() of a float round-trips exactly.
    """
    if not ids:
        return 0
    id_array = "{" + ",".join(str(i) for i in ids) + "}"
    score_array = "{" + ",".join(repr(float(s)) for s in scores) + "}"
    table = Memory._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            UPDATE {table} AS m SET pagerank_score = v.score
            FROM unnest(%s::text::uuid[], %s::text::float8[]) AS v(id, score)
            WHERE m.id = v.id AND m.namespace_id = %s
              AND m.pagerank_score IS DISTINCT FROM v.score
            """,
            [id_array, score_array, namespace_id],
        )
        return cursor.rowcount
