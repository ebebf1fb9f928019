"""The write path's near-duplicate check finds a namespace's own near-duplicate even when the
one HNSW index that serves every namespace holds many closer vectors of other namespaces (a
multi-tenant table: the same texts stored by many teams). Measured at 1M memories: an index
walk with ef_search 40 read 33 rows and dropped 28 of them as other namespaces'."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection
from django.test import override_settings

from apps.memories.services import memory_batch_create

pytestmark = pytest.mark.django_db
DIM = 384


def _at_cosine(v: np.ndarray, cosine: float, rng) -> np.ndarray:
    noise = rng.standard_normal(DIM)
    noise -= noise.dot(v) * v
    noise /= np.linalg.norm(noise)
    return (cosine * v + np.sqrt(1 - cosine**2) * noise).astype(np.float32)


def _store(namespace, vectors: list[np.ndarray], label: str) -> list:
    items = [{"content": f"{label} note {i}"} for i in range(len(vectors))]
    results = memory_batch_create(
        namespace=namespace, items=items, vectors=np.stack(vectors),
        check_near_duplicates=False, chunk=False, infer=False,
    )  # fmt: skip
    return [r.memory for r in results]


@pytest.fixture
def crowded(namespace, other_namespace):
    """`namespace` holds one memory at cosine 0.97 to the probe and five unrelated ones;
    `other_namespace` holds 120 memories closer to the probe (0.995) than that one."""
    rng = np.random.default_rng(7)
    probe = rng.standard_normal(DIM)
    probe = (probe / np.linalg.norm(probe)).astype(np.float32)
    _store(other_namespace, [_at_cosine(probe, 0.995, rng) for _ in range(120)], "other")
    unrelated = [_at_cosine(probe, 0.0, rng) for _ in range(5)]
    (near, *_) = _store(namespace, [_at_cosine(probe, 0.97, rng), *unrelated], "own")
    # Make PostgreSQL prefer walking the HNSW index (no sort) whenever the query allows it,
    # as it does on a large table; the check must not depend on which plan it picks.
    with connection.cursor() as cursor:
        cursor.execute("SET enable_sort = off")
    yield probe, near
    with connection.cursor() as cursor:
        cursor.execute("RESET enable_sort")


def _reported(namespace, probe) -> list[str]:
    (result,) = memory_batch_create(
        namespace=namespace, items=[{"content": "the probe"}], vectors=probe[None],
        chunk=False, infer=False,
    )  # fmt: skip
    return [d["id"] for d in result.near_duplicates]


def test_a_small_namespace_finds_its_near_duplicate_behind_other_namespaces(namespace, crowded):
    probe, near = crowded
    assert _reported(namespace, probe) == [str(near.id)]


@override_settings(SEARCH_EXACT_SCAN_MAX=3)
def test_a_large_namespace_walks_the_index_until_it_reaches_its_own(namespace, crowded):
    probe, near = crowded
    assert _reported(namespace, probe) == [str(near.id)]
