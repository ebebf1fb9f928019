"""MMR: lambda per intent; near-duplicates pushed down; items without vectors keep order."""

from __future__ import annotations

import pytest

from apps.search.pipeline.mmr import mmr, mmr_lambda
from tests.factories import ranked


@pytest.mark.parametrize(
    ("intent", "lam"),
    [("understand", 0.5), ("fix_bug", 0.85), ("lookup", 0.7), ("temporal", 0.7),
     ("explore", 0.7)],
)  # fmt: skip
def test_mmr_lambda_per_intent(intent, lam):
    assert mmr_lambda(intent) == lam


def _items():
    return [
        ranked("a", 1.0, [1, 0, 0]),
        ranked("a2", 0.95, [1, 0.01, 0]),
        ranked("b", 0.9, [0, 1, 0]),
        ranked("c", 0.1, [0, 0, 1]),
    ]


def test_mmr_pushes_a_near_duplicate_down():
    assert [r.id for r in mmr(_items(), 0.5)][:2] == ["a", "b"]
    assert [r.id for r in mmr(_items(), 1.0)][:2] == ["a", "a2"]


def test_mmr_returns_new_list_and_keeps_items_unchanged():
    items = _items()
    out = mmr(items, 0.5)
    assert out is not items and [r.id for r in items] == ["a", "a2", "b", "c"]
    assert {id(r) for r in out} == {id(r) for r in items}


def test_items_without_vectors_follow_in_their_order():
    items = [*_items(), ranked("x", 0.05), ranked("y", 0.04)]
    assert [r.id for r in mmr(items, 0.5)][-2:] == ["x", "y"]


def test_fewer_than_three_vectors_change_nothing():
    items = [ranked("a", 1.0, [1, 0]), ranked("b", 0.5, [1, 0]), ranked("c", 0.4)]
    assert [r.id for r in mmr(items, 0.5)] == ["a", "b", "c"]
