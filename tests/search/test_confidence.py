"""Evidence gap: the z-score rule and the absolute checks (pure)."""

from __future__ import annotations

import pytest

from apps.search.pipeline.confidence import evidence_gap, top_z_score, weak_evidence
from tests.factories import ranked


def test_gap_flag_when_nothing_stands_out():
    assert evidence_gap([0.50, 0.49, 0.48, 0.50, 0.47, 0.49])
    assert evidence_gap([])


def test_no_gap_flag_on_a_clear_winner():
    scores = [1.0] + [0.2, 0.21, 0.19, 0.2, 0.22, 0.18, 0.2, 0.21, 0.19]
    assert top_z_score(scores) > 1.5
    assert not evidence_gap(scores)


@pytest.mark.parametrize(
    ("scores", "gap"),
    [([1.0, 0.5, 0.4, 0.3], False), ([1.0, 0.9, 0.5, 0.4], True), ([1.0, 0.0], False)],
)
def test_gap_threshold_is_z_15(scores, gap):
    # z = (top - mean) / stdev: 1.62 and 1.30 for the first two; two values say nothing
    assert evidence_gap(scores) is gap


CLEAR = [ranked("a", 1.0)] + [ranked(f"n{i}", 0.2) for i in range(5)]


@pytest.mark.parametrize(
    ("lists", "fallback", "similarity", "gap"),
    [
        ({"keyword": [("a", 3.0)]}, False, 0.1, False),  # a keyword hit is strong evidence
        ({"semantic": [("a", 0.5)]}, False, 0.5, False),
        ({"semantic": [("a", 0.2)]}, True, 0.2, True),  # only the fallback threshold matched
        ({"semantic": [("a", 0.25)]}, False, 0.25, True),  # below the similarity floor
    ],
)
def test_weak_evidence_rule(lists, fallback, similarity, gap):
    assert weak_evidence(CLEAR, lists, fallback=fallback, best_similarity=similarity) is gap


def test_nothing_found_is_weak_evidence():
    assert weak_evidence([], {}, fallback=False, best_similarity=0.0)
