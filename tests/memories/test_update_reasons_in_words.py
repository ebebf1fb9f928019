"""The reasons a new memory looks like an update of a stored one, as the page says them: one
sentence with the names as the writer spelled them, no scores or machine notation."""

from __future__ import annotations

import pytest

from apps.memories.updates import judge_pair, why_in_words


@pytest.mark.parametrize(
    "older, newer, sentence",
    [
        (
            "CI runs on Jenkins.",
            "We moved CI from Jenkins to GitHub Actions.",
            "It names the same subjects (CI, Jenkins) and says it moved.",
        ),
        (
            "The API uses PostgreSQL 14.",
            "The API uses PostgreSQL 16 now.",
            "It names the same subject (PostgreSQL), says something changed (“now”) and gives "
            "16 where the other said 14.",
        ),
        (
            "Never commit API tokens to the repository.",
            "Commit the API tokens to the repository.",
            "It names the same subject (API) and one of the two negates the other.",
        ),
    ],
)
def test_the_detectors_reasons_read_as_a_sentence(older, newer, sentence):
    why = "; ".join(judge_pair(older, newer, 0.66).reasons)
    assert why_in_words(why, newer) == sentence


def test_a_value_that_only_appears_and_a_past_tense_cue():
    why = "similar meaning (0.70); says it changed ('took over'); a different value (? -> 3)"
    assert why_in_words(why) == "It says it took over and gives a new value (3)."


def test_nothing_but_the_similarity_still_reads_as_words():
    assert why_in_words("similar meaning (0.91)") == "It reads close in meaning."
    assert why_in_words("") == "It reads close in meaning."
