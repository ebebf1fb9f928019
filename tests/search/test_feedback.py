"""The feedback stage: pseudo-relevance feedback from the first hits' vectors."""

from __future__ import annotations

import numpy as np
import pytest

from apps.search.pipeline.feedback import feedback_vector
from apps.search.services import search
from tests.factories import unit

pytestmark = pytest.mark.django_db


def test_the_vector_moves_towards_the_seeds_and_stays_unit():
    query = unit([1.0, 0.0, 0.0])
    seeds = [unit([0.0, 1.0, 0.0]), unit([0.0, 1.0, 1.0])]
    moved = feedback_vector(query, seeds)
    centroid = unit(np.mean(seeds, axis=0))
    assert np.isclose(np.linalg.norm(moved), 1.0)
    assert float(moved @ centroid) > float(query @ centroid)
    assert float(moved @ query) > 0.5  # the question keeps its own half


@pytest.mark.parametrize("beta", [0.5, 1.0, 2.0])
def test_beta_weighs_the_seeds(beta):
    query, seed = unit([1.0, 0.0]), unit([0.0, 1.0])
    moved = feedback_vector(query, [seed], beta=beta)
    assert np.isclose(moved[1] / moved[0], beta)


def test_no_seeds_or_zero_vectors_give_none():
    assert feedback_vector(unit([1.0, 0.0]), []) is None
    assert feedback_vector(np.zeros(2), [unit([1.0, 0.0])]) is None


NOTES = [
    "I painted a sunset over the lake last weekend.",
    "My latest canvas shows a horse in the meadow, oil on wood.",
    "We repainted the kitchen cabinets in a pale blue.",
    "The quarterly budget review is on Thursday.",
    "Redis is the Celery broker.",
]


def test_feedback_is_a_strategy_of_its_own_and_can_be_switched_off(remember, settings):
    remember(NOTES)
    query = "What artworks has she made?"
    response = search(namespace="test-ns", query=query, include_debug=True)
    assert any("feedback" in m["why"] for m in response.memories)
    assert "feedback" in response.debug["stage_timings_ms"]
    off = search(namespace="test-ns", query=query, disabled_stages=["feedback"], include_debug=True)
    assert all("feedback" not in m["why"] for m in off.memories)
    assert "feedback" not in off.debug["stage_timings_ms"]
    settings.SEARCH_FEEDBACK_SHARE = 0.0  # the setting switches it off as well
    none = search(namespace="test-ns", query=query, include_debug=True)
    assert all("feedback" not in m["why"] for m in none.memories)
