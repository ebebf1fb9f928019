"""Contradiction detection on its own: `contradicts` edges and the constitutional-tier check,
against the real Postgres and the real model."""

from __future__ import annotations

import numpy as np
import pytest

from apps.memories.services import edge_create
from apps.search.pipeline import contradictions, retrieve
from apps.search.pipeline.scope import Scope
from apps.search.response import contradicting_pairs, payload_rows

pytestmark = pytest.mark.django_db


def _results(namespace, *memories) -> list:
    scope = Scope(namespace_id=namespace.id)
    return [r for r in retrieve.browse(scope, 10) if r.id in {str(m.id) for m in memories}]


def test_the_payload_reads_the_contradicts_edges_among_the_results_newest_first(
    namespace, remember
):
    a, b, c = remember(["Deploys go out on Fridays.", "Never deploy on Fridays.", "Unrelated."])
    edge_create(source=a, target=b, relation="contradicts")
    edge_create(source=a, target=c, relation="caused")
    edge_create(source=c, target=a, relation="contradicts")  # the newer edge
    rows = payload_rows(_results(namespace, a, b, c))
    assert contradicting_pairs(rows) == [(str(c.id), str(a.id)), (str(a.id), str(b.id))]
    assert contradicting_pairs(payload_rows(_results(namespace, a, b))) == [(str(a.id), str(b.id))]
    assert contradicting_pairs(payload_rows(_results(namespace, b, c))) == []


def test_tier_pairs_need_similar_meaning_and_opposite_negation():
    v = np.array([1.0, 0.0], dtype=np.float32)
    w = np.array([0.0, 1.0], dtype=np.float32)
    items = [
        ("rule", "constitutional", "Never push to main directly.", v),
        ("same", "normal", "Push to main directly when in a hurry.", v),
        ("agree", "normal", "Do not push to main directly.", v),
        ("far", "normal", "Push the button.", w),
    ]
    assert contradictions.tier_pairs(items) == [("rule", "same")]


def test_find_uses_texts_and_vectors_of_the_results(namespace, remember):
    rule, loose, _ = remember(
        [
            {"content": "Never store passwords in plain text.", "tier": "constitutional"},
            "Store passwords in plain text files for convenience.",
            "Lunch is at noon.",
        ]
    )
    items = retrieve.with_embeddings(retrieve.browse(Scope(namespace_id=namespace.id), 10), 10)
    assert (str(rule.id), str(loose.id)) in contradictions.find(items, [])
