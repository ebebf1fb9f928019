"""Graph retrieval: walk causal edges from the seed hits (depth <= 2). Each hop multiplies the
score by the edge strength and a relation factor (supersedes 1.5, caused 1.3,
contradicts 0.8, others 1.0); a memory reached several ways keeps its best score."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .reads import edges as edge_reads
from .reads.edges import Edge
from .scope import Scope

RELATION_MULTIPLIER = {"supersedes": 1.5, "caused": 1.3, "contradicts": 0.8}
MAX_DEPTH = 2


def hop_factor(relation: str, strength: float) -> float:
    return strength * RELATION_MULTIPLIER.get(relation, 1.0)


def walk(
    seeds: Mapping[str, float], edges: Iterable[Edge], depth: int = MAX_DEPTH
) -> dict[str, float]:
    """Scores of memories reached from the seeds (seeds themselves excluded). Edges are
    followed both ways: a seed's cause and its consequence are both context."""
    adjacency: dict[str, list[tuple[str, float]]] = {}
    for source, target, relation, strength in edges:
        factor = hop_factor(relation, strength)
        adjacency.setdefault(source, []).append((target, factor))
        adjacency.setdefault(target, []).append((source, factor))
    best: dict[str, float] = {}
    frontier = dict(seeds)
    for _ in range(depth):
        nxt: dict[str, float] = {}
        for node, score in frontier.items():
            for other, factor in adjacency.get(node, ()):
                value = score * factor
                if other in seeds or value <= best.get(other, 0.0):
                    continue
                best[other] = value
                nxt[other] = max(value, nxt.get(other, 0.0))
        frontier = nxt
    return best


def fetch_edges(
    namespace_id: int, ids: Iterable[str], depth: int = MAX_DEPTH, scope: Scope | None = None
) -> list[Edge]:
    """Edges within `depth` hops of `ids` (one query per hop, none from a kept namespace)."""
    return edge_reads.fetch_edges(namespace_id, ids, depth, scope)


def neighbours_from_edges(edges: Iterable[Edge]) -> dict[str, list[tuple[str, float]]]:
    """Adjacency with hop factors, for co-activation."""
    out: dict[str, list[tuple[str, float]]] = {}
    for source, target, relation, strength in edges:
        factor = min(1.0, hop_factor(relation, strength))
        out.setdefault(source, []).append((target, factor))
        out.setdefault(target, []).append((source, factor))
    return out
