"""Graph retrieval: walk causal edges from the seed hits (depth <= 2). Each hop multiplies the
score by the edge strength and a relation factor (supersedes 1.5, caused 1.3,
contradicts 0.8, others 1.0); a memory reached several ways keeps its best score."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from apps.memories.models import CausalEdge
from memoryhub.db_router import read_connection as connection

RELATION_MULTIPLIER = {"supersedes": 1.5, "caused": 1.3, "contradicts": 0.8}
MAX_DEPTH = 2

Edge = tuple[str, str, str, float]  # source, target, relation, strength

# Plain SQL rather than the ORM: this runs on every search, and building the queryset cost
# more CPU than PostgreSQL spent answering it. Same rows and order as
# CausalEdge.objects.filter(namespace_id=...).touching(ids).
EDGES_TOUCHING = (
    f"SELECT source_id, target_id, relation, strength FROM {CausalEdge._meta.db_table} "
    "WHERE namespace_id = %s AND (source_id = ANY(%s::uuid[]) OR target_id = ANY(%s::uuid[])) "
    "ORDER BY created_at DESC"
)


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


def fetch_edges(namespace_id: int, ids: Iterable[str], depth: int = MAX_DEPTH) -> list[Edge]:
    """Edges within `depth` hops of `ids` (one query per hop)."""
    seen: set[str] = set()
    frontier = set(map(str, ids))
    edges: dict[tuple, Edge] = {}
    for _ in range(depth):
        if not frontier:
            break
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


def neighbours_from_edges(edges: Iterable[Edge]) -> dict[str, list[tuple[str, float]]]:
    """Adjacency with hop factors, for co-activation."""
    out: dict[str, list[tuple[str, float]]] = {}
    for source, target, relation, strength in edges:
        factor = min(1.0, hop_factor(relation, strength))
        out.setdefault(source, []).append((target, factor))
        out.setdefault(target, []).append((source, factor))
    return out
