"""Helpers for job tests: memories and edges written straight to the real database.

PageRank, decay and feedback tests need many rows but no vectors, so they skip the write path's
embedding step; re-embedding tests use the real model.
"""

from __future__ import annotations

import pytest

from apps.memories.models import CausalEdge, Memory, Namespace
from tests.factories import bare_memories


def make_memories(namespace: Namespace, count: int, **fields) -> list[Memory]:
    return bare_memories(namespace, count, lambda i: fields)


def make_edges(namespace: Namespace, links) -> list[CausalEdge]:
    """links: (source Memory, target Memory, relation, strength)."""
    return CausalEdge.objects.bulk_create(
        [
            CausalEdge(namespace=namespace, source=s, target=t, relation=r, strength=w)
            for s, t, r, w in links
        ]
    )


@pytest.fixture
def memories_factory():
    return make_memories


@pytest.fixture
def edges_factory():
    return make_edges
