"""The acceptance criteria on the held-out set (lab/data), as `manage.py
evaluate_validity --heldout` measures them: a regression here is a regression users notice."""

from __future__ import annotations

import pytest

from lab.validity import heldout_scores

pytestmark = pytest.mark.django_db


def test_heldout_changed_facts_meet_the_criteria(embedding_model):
    scores = heldout_scores()
    assert scores["changes"] == 24 and scores["related"] == 24
    assert scores["search_current"] >= 22, scores["search_misses"]
    assert scores["search_as_of"] >= 22, scores["search_misses"]
    assert scores["possible_updates_named"] >= 22
    assert scores["possible_updates_fired_on_related"] <= 1
    # The extended set of related true pairs (change words inside other words, lists that
    # share a subject, negations that both hold): at most 3% put anything in the queue.
    assert scores["extended_related"] >= 60
    assert scores["fired_on_extended_related"] / scores["extended_related"] <= 0.03
    # A negated claim is queued as a contradiction, never offered as an update.
    assert scores["negation_as_update"] == 0
    assert scores["negation_as_contradiction"] >= scores["negation_contradictions"] - 1
