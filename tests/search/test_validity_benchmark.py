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
    assert scores["possible_updates_named"] >= 20
    assert scores["possible_updates_fired_on_related"] <= 2
