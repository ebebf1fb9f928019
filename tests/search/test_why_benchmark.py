"""The why path's targets on the labelled decision chains and no-link questions (lab/data), as
`manage.py evaluate_why` measures them: a regression here is one users notice."""

from __future__ import annotations

import pytest

from lab.why import read_set, score_split

pytestmark = pytest.mark.django_db


def test_the_labelled_set_is_the_size_the_targets_need():
    rows = read_set()
    chains = [r for r in rows if r["kind"] == "chain"]
    assert len(chains) >= 40
    assert all(2 <= len(r["memories"]) <= 4 and r["edges"] for r in chains)
    assert sum("effect" in r for r in chains) >= 20
    for split in ("train", "heldout"):
        nolink = [r for r in rows if r["kind"] == "nolink" and r["split"] == split]
        assert len(nolink) >= 20, split
    fresh = [r for r in rows if r["split"].startswith("fresh")]
    assert sum(r["kind"] == "chain" for r in fresh) >= 150
    assert sum(r["kind"] == "nolink" for r in fresh) >= 100
    assert {r["split"] for r in rows} == {"train", "heldout", *FRESH}


# Five fresh collections, each by an author who saw none of the others nor the why path, each
# scored once as written (docs/benchmarks.md) and then, all but the last, taught the wordings
# it showed were missing, so they guard against regressions like the others. One no-link
# question in fresh3 and one in fresh4 still get a chain: the memory asked about is unlinked,
# but a linked one with the same words ("date-based versions", "limit") ranks first.
FRESH = ("fresh", "fresh2", "fresh3", "fresh4", "fresh5")
NO_LINK_CLAIMED = {"fresh3": 1, "fresh4": 1}


@pytest.mark.parametrize("split", ["train", "heldout", *FRESH[:-1]])
def test_why_effect_and_no_link_targets(embedding_model, split):
    scores = score_split(read_set(), split)
    why, effect, no_link = scores["why"], scores["effect"], scores["no_link"]
    assert why["share"] >= 0.85, why["misses"]
    assert effect["share"] >= 0.85, effect["misses"]
    # No chain claimed for a question about an unlinked memory (but the known ones above).
    claimed = no_link["questions"] - no_link["passed"]
    assert claimed <= NO_LINK_CLAIMED.get(split, 0), no_link["misses"]


def test_the_last_fresh_collection_keeps_its_first_score(embedding_model):
    """fresh5 missed the targets on its first score (why 33/41, effect 31/41: people ask in
    more ways than the question analysis reads) and nothing was tuned on it: it holds that
    score until a general fix lifts it."""
    scores = score_split(read_set(), "fresh5")
    assert scores["why"]["passed"] >= 33, scores["why"]["misses"]
    assert scores["effect"]["passed"] >= 31, scores["effect"]["misses"]
    assert scores["no_link"]["passed"] == scores["no_link"]["questions"]
