"""Temporal neighbours and co-activation (pure)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from apps.search.pipeline.coactivate import coactivate, natural_key, spread, temporal_neighbours
from apps.search.pipeline.context import Chain, borrow_context, with_context
from apps.search.types import Evidence
from tests.factories import ranked

T = datetime(2024, 1, 1, tzinfo=UTC)


def test_temporal_neighbours_keep_source_order_within_a_timestamp():
    rows = [("x10", T, "D1:10"), ("x2", T, "D1:2"), ("x1", T, "D1:1"),
            ("later", T + timedelta(days=3), "D2:1")]  # fmt: skip
    nbrs = temporal_neighbours(rows)
    assert nbrs["x2"] == ("x1", "x10")
    assert nbrs["x10"] == ("x2",)  # the next session is days away: not a neighbour
    assert natural_key("D1:2") < natural_key("D1:10")


def test_batch_written_memories_without_source_ids_are_not_neighbours():
    nbrs = temporal_neighbours(
        [("a", T, None), ("b", T, None), ("c", T + timedelta(minutes=5), None)]
    )
    assert nbrs["a"] == () or nbrs["a"] == ("c",)
    assert "a" not in nbrs["b"] and "b" not in nbrs["a"]


def test_coactivation_spreads_from_top_hits_only():
    scores = {"a": 1.0, "b": 0.5, "n": 0.0, "m": 0.0}
    out, received = coactivate(scores, {"a": ("n",), "b": ("m",)}, {}, share=0.2, top=1)
    assert out["n"] == pytest.approx(0.2) and out["m"] == 0.0 and received == {"n"}


def test_spread_stage_marks_what_it_lifted():
    items = [ranked("a", 1.0), ranked("n", 0.0), ranked("far", 0.1)]
    out = spread(items, {"a": ("n",)}, {"a": [("far", 0.5)]}, top=1, gated=False)
    assert [r.id for r in out] == ["a", "n", "far"]  # order is the next stage's business
    assert out[1].score == pytest.approx(0.2) and out[1].reasons == ("coactivation",)
    assert out[2].score == pytest.approx(0.2) and out[2].boosts == (("coactivation", 0.1),)
    assert out[0] is items[0]


def test_spread_lifts_only_what_the_query_reaches():
    items = [
        ranked("a", 1.0, evidence=Evidence(lexical=2.0, similarity=0.0)),
        ranked("stray", 0.0),  # fetched only as a neighbour
        ranked("hit", 0.5, evidence=Evidence(lexical=0.5, similarity=0.0)),
    ]
    out = spread(items, {"a": ("stray", "hit")}, {}, top=1)
    assert out[1] is items[1]
    assert out[2].score == pytest.approx(0.5 + 0.2 * 0.5) and "coactivation" in out[2].reasons


def _line(*ids: str) -> Chain:
    """Memories in a line, each linked to the next, each its own session."""
    linked = np.array([True] * (len(ids) - 1) + [False])
    return Chain(list(ids), {k: i for i, k in enumerate(ids)}, linked, np.arange(len(ids)))


def test_context_borrows_from_the_best_neighbour_and_rescales():
    rows = _line("a", "b", "elsewhere").rows(["a", "b"], 2)  # one outside the pool
    assert borrow_context(np.array([1.0, 0.0]), rows, 0.3).tolist() == [1.0, 0.3]
    # a neighbour outside the pool counts 0, and a memory without neighbours borrows nothing
    rows = _line("elsewhere", "a").rows(["a", "b"], 2)
    assert borrow_context(np.array([-0.5, 0.2]), rows, 0.3).tolist() == [-0.5, 0.2]
    keys = ["a", "b", "c"]
    normalized = {"keyword": np.array([1.0, 0.1, 0.2]), "exact": np.array([0.0, 1.0, 0.0])}
    out = with_context(normalized, _line("a", "b").rows(keys, 2))
    # b (0.1 + 0.3 x 1.0) overtakes c; rescaled to 0..1; other strategies untouched
    assert out["keyword"][0] == 1.0 and out["keyword"][1] > out["keyword"][2] == 0.0
    assert out["exact"] is normalized["exact"] and normalized["keyword"][1] == 0.1
