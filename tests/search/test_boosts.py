"""Boosts: entity tags, quality / decay / pagerank, the query's own time range (pure)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from apps.search.pipeline.boost import (
    apply_boosts,
    decay_factor,
    entity_boost,
    time_boost,
)
from tests.factories import ranked


def test_decay_follows_stored_stability():
    # The tier scaling lives in the decay job's stability (tests/jobs/test_decay.py).
    assert decay_factor(1.0) == 1.0
    assert decay_factor(0.0) < decay_factor(0.5) < decay_factor(0.9) < 1.0
    assert decay_factor(0.0) == pytest.approx(0.8)


def test_pagerank_boost_is_relative_and_neutral_without_edges():
    flat = apply_boosts([ranked("a", 1.0, pagerank=0.01), ranked("b", 0.99, pagerank=0.01)])
    assert flat[0].score > flat[1].score  # equal ranks: order kept
    out = apply_boosts([ranked("a", 1.0, pagerank=0.001), ranked("b", 0.99, pagerank=0.2)])
    assert out[1].score > out[0].score  # a central memory overtakes a near tie


def test_quality_blend_and_recorded_boosts():
    items = [ranked("a", 0.5, importance=1.0, stability=0.5), ranked("b", 0.5, importance=0.0)]
    out = apply_boosts(items, quality_boost=0.5)
    assert out[0].score == pytest.approx((0.5 * 0.5 + 0.5 * 1.0) * decay_factor(0.5))
    assert out[1].score == pytest.approx(0.25)
    assert dict(out[0].boosts) == {"quality": 0.5, "decay": pytest.approx(0.9)}
    assert items[0].score == 0.5 and items[0].boosts == ()  # the input is not changed


def test_entity_boost_multiplies_tagged_memories_only():
    out = entity_boost([ranked("a", 1.0, tags=("Melanie",)), ranked("b", 1.0)], ["melanie"])
    assert out[0].score == pytest.approx(1.5) and out[0].reasons == ("entity",)
    assert out[1].score == 1.0 and out[1].reasons == ()


def test_time_boost_inside_the_named_range():
    inside = ranked("in", 1.0, created_at=datetime(2024, 3, 5, tzinfo=UTC))
    outside = ranked("out", 1.0, created_at=datetime(2024, 4, 5, tzinfo=UTC))
    after, before = datetime(2024, 3, 1, tzinfo=UTC), datetime(2024, 4, 1, tzinfo=UTC)
    out = time_boost([inside, outside], after, before)
    assert [r.score for r in out] == [1.5, 1.0]
    assert out[0].boosts == (("time_match", 1.5),)
    assert time_boost([inside], None, None)[0] is inside
