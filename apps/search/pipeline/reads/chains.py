"""Reads for the why path: the causal links around the matched memories, kept to memories a
search may show (the namespace, not archived, learnt by an as-of moment), and their titles."""

from __future__ import annotations

from collections.abc import Iterable

from apps.memories.titles import shown_title

# Raw SQL reads go where the router sends reads (the replica, when one is configured).
from memoryhub.replica.routing import read_connection as connection

from ..scope import MEMORY, Scope, uuid_array
from .edges import Edge, fetch_edges

CHAIN_RELATIONS = ("caused", "depends_on", "supersedes")


def chain_edges(scope: Scope, ids: Iterable[str], depth: int) -> list[Edge]:
    """The causal links within `depth` hops of `ids` whose two memories are visible."""
    edges = [e for e in fetch_edges(scope.namespace_id, ids, depth) if e[2] in CHAIN_RELATIONS]
    if not edges:
        return []
    visible = _visible(scope, {x for e in edges for x in e[:2]})
    return [e for e in edges if e[0] in visible and e[1] in visible]


def _visible(scope: Scope, ids: set[str]) -> set[str]:
    """Of `ids`, the memories a chain may name. A superseded memory stays: "replaces" names
    what a decision replaced, which a search of now leaves out of its results."""
    chain_scope = Scope(namespace_id=scope.namespace_id, learnt_by=scope.learnt_by)
    where, params = chain_scope.where()
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT m.id::text FROM {MEMORY} m WHERE {where} AND m.id = ANY(%s::uuid[])",
            params + [uuid_array(ids)],
        )
        return {r[0] for r in cursor.fetchall()}


def titles(ids: Iterable[str]) -> dict[str, str]:
    """What a chain calls each memory (the title every page shows)."""
    ids = list(ids)
    if not ids:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT m.id::text, m.title, left(m.content, 400) FROM {MEMORY} m "
            "WHERE m.id = ANY(%s::uuid[])",
            [uuid_array(ids)],
        )
        return {k: shown_title(t, c) for k, t, c in cursor.fetchall()}
