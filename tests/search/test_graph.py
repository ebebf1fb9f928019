"""Graph walk: relation multipliers per hop, depth two (pure)."""

from __future__ import annotations

import pytest

from apps.search.pipeline.graph import RELATION_MULTIPLIER, hop_factor, walk


@pytest.mark.parametrize(
    ("relation", "factor"),
    [("supersedes", 1.5), ("caused", 1.3), ("contradicts", 0.8), ("relates_to", 1.0),
     ("depends_on", 1.0)],
)  # fmt: skip
def test_relation_multipliers(relation, factor):
    assert hop_factor(relation, 1.0) == pytest.approx(factor)
    assert hop_factor(relation, 0.5) == pytest.approx(factor * 0.5)
    assert RELATION_MULTIPLIER.get(relation, 1.0) == factor


def test_walk_depth_two_multiplies_per_hop():
    edges = [("s", "a", "caused", 1.0), ("a", "b", "supersedes", 0.5), ("b", "c", "caused", 1.0)]
    reached = walk({"s": 1.0}, edges)
    assert reached["a"] == pytest.approx(1.3)
    assert reached["b"] == pytest.approx(1.3 * 0.75)
    assert "c" not in reached  # three hops away
