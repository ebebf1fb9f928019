"""The why path's pure parts: which questions ask why or what followed, the walk along causal
links (direction, depth, fan-out, cycles), and how a chain reads."""

from __future__ import annotations

import pytest

from apps.search.pipeline.analyse import causal_direction
from apps.search.pipeline.question_kind import CAUSE, EFFECT
from apps.search.pipeline.why import (
    best_chain,
    chain_text,
    lifted_seeds,
    links,
    path_payload,
    seeds_of,
)
from apps.search.types import Ranked


@pytest.mark.parametrize(
    ("query", "direction"),
    [
        ("Why did we move CI off Jenkins?", CAUSE),
        ("why is the API rate limited", CAUSE),
        ("Can you tell me why staging uses the pg14 extension list?", CAUSE),
        ("How come on-call has a secondary responder?", CAUSE),
        ("What led to the monorepo?", CAUSE),
        ("What led us to pin the ingress controller?", CAUSE),
        ("What was behind the switch to weekly releases?", CAUSE),
        ("what's behind the 2 GB upload limit", CAUSE),
        ("what was the reason for three seats on the free plan", CAUSE),
        ("The reason behind pinning Node 18", CAUSE),
        ("What's the reason the nightly export moved to Sunday?", CAUSE),
        ("what’s the reason we pinned Node 18", CAUSE),
        ("What caused the outage in the billing module?", CAUSE),
        ("What did the Jenkins outage lead to?", EFFECT),
        ("what did the scraper incident cause", EFFECT),
        ("What did merging into the monorepo result in?", EFFECT),
        ("What followed from the checkout redesign rollback?", EFFECT),
        ("What came of the Sendgrid suspension?", EFFECT),
        ("consequences of the stolen laptop", EFFECT),
        ("Is there a reason the cron job runs at 3am?", CAUSE),
        ("What's the thinking behind two approvers on payroll changes?", CAUSE),
        ("The retry limit is five because of what?", CAUSE),
        ("Where did the 30-day rule for refunds come from?", CAUSE),
        ("What prompted the switch to Postgres?", CAUSE),
        ("Did anything come of the security review?", EFFECT),
        ("The staging outage last week, did it lead to anything?", EFFECT),
        ("What did we do about the flaky tests?", EFFECT),
        ("Once the audit came back, what did finance decide?", EFFECT),
        ("What was the outcome of the pricing experiment?", EFFECT),
        ("What changed in the release process after the bad deploy?", EFFECT),
        ("The vendor raised prices 40%. Then what?", EFFECT),
        ("What do we use for CI?", None),
        ("What does Sam want to do after the conference?", None),
        ("What is pinned on the board for motivation?", None),
        ("What did the release notes say about search?", None),
        ("When did we migrate the database?", None),
        ("Which database runs in production", None),
        ("How does the authentication flow work?", None),
        ("the causes table in the schema", None),
        ("what is the reasonable timeout", None),
    ],
)
def test_causal_direction_of_a_question(query, direction):
    assert causal_direction(query) == direction


# source, target, relation, strength (as stored: "incident caused decision")
EDGES = [
    ("incident", "decision", "caused", 1.0),
    ("followup", "decision", "depends_on", 1.0),
    ("decision", "fact", "depends_on", 0.8),
    ("new", "decision", "supersedes", 1.0),
]


def test_cause_direction_follows_caused_in_and_depends_on_out():
    graph = links(EDGES, CAUSE)
    assert {h[0] for h in graph["decision"]} == {"incident", "fact"}
    assert [h[0] for h in graph["new"]] == ["decision"]  # what it replaced
    assert "incident" not in graph  # the incident has no cause of its own


def test_effect_direction_is_the_reverse():
    graph = links(EDGES, EFFECT)
    assert [h[0] for h in graph["incident"]] == ["decision"]
    assert {h[0] for h in graph["decision"]} == {"followup", "new"}


def test_best_chain_prefers_the_stronger_link_and_names_how_it_reads():
    chain = best_chain({"decision": 1.0}, EDGES, CAUSE)
    assert chain is not None and chain.ids == ["decision", "incident"]
    assert [s.reads for s in chain.steps] == [None, "caused by"]


def test_relevance_of_a_linked_memory_can_pick_its_branch():
    chain = best_chain({"decision": 1.0}, EDGES, CAUSE, {"fact": 1.0})
    assert chain.ids == ["decision", "fact"]
    assert chain.steps[1].reads == "depends on"


def test_the_chain_runs_to_its_root_within_the_depth():
    edges = [("a", "b", "caused", 1.0), ("b", "c", "caused", 1.0), ("c", "d", "caused", 1.0)]
    edges.append(("root", "a", "caused", 1.0))
    assert best_chain({"d": 1.0}, edges, CAUSE).ids == ["d", "c", "b", "a"]
    assert best_chain({"d": 1.0}, edges, CAUSE, depth=1).ids == ["d", "c"]


def test_a_cycle_ends_the_path_instead_of_looping():
    edges = [("a", "b", "caused", 1.0), ("b", "a", "caused", 1.0)]
    assert best_chain({"a": 1.0}, edges, CAUSE).ids == ["a", "b"]


def test_fan_out_bounds_the_links_followed_from_a_memory():
    edges = [(f"cause{i}", "x", "caused", 0.5 + i / 100) for i in range(10)]
    edges.append(("weak", "x", "caused", 0.1))
    edges.append(("root", "weak", "caused", 1.0))
    chain = best_chain({"x": 1.0}, edges, CAUSE, fan_out=3)
    assert chain.ids == ["x", "cause9"]  # the weak link (with a root) is never followed


@pytest.mark.parametrize(
    "edges",
    [
        [],
        [("a", "b", "relates_to", 1.0), ("a", "c", "contradicts", 1.0)],
        [("seed", "later", "caused", 1.0)],  # an effect, asked for causes
    ],
)
def test_no_link_in_the_direction_no_chain(edges):
    assert best_chain({"seed": 1.0, "a": 1.0}, edges, CAUSE) is None


def test_chain_text_reads_arrows_by_direction():
    why = best_chain({"decision": 1.0}, EDGES, CAUSE)
    titles = {"decision": "CI moved to GitHub Actions", "incident": "Jenkins outage of 3 March"}
    text = chain_text(path_payload(why, titles))
    assert text == "CI moved to GitHub Actions  <- caused by  Jenkins outage of 3 March"
    effect = best_chain({"incident": 1.0}, EDGES, EFFECT)
    titles["followup"] = "Release tags with release.yml"
    assert chain_text(path_payload(effect, titles)).startswith(
        "Jenkins outage of 3 March  -> caused  CI moved to GitHub Actions"
    )
    assert chain_text([]) == "" and path_payload(None, titles) == []


def test_seeds_are_the_top_result_and_those_nearly_tying_it():
    ranked = [Ranked(id="a", score=1.0), Ranked(id="b", score=0.9), Ranked(id="c", score=0.75)]
    assert seeds_of(ranked) == {"a": 1.0, "b": 0.9}
    assert seeds_of([]) == {}


def test_a_linked_neighbour_of_an_unlinked_top_result_starts_no_chain():
    # "Why do search pods run three replicas?": the unlinked note is first, the linked memory
    # that shares its words scores 0.7 of it; the question is not about that one.
    ranked = [Ranked(id="replicas", score=1.0), Ranked(id="decision", score=0.7)]
    seeds = seeds_of(ranked)
    assert seeds == {"replicas": 1.0}
    assert best_chain(seeds, EDGES, CAUSE) is None


def test_a_start_that_nearly_ties_only_after_its_links_lifted_it_is_lifted():
    # "b" matches the question (fused) at 0.8 of the top, "c" at 0.9: only "b" owes its near
    # tie to the boosts.
    ranked = [
        Ranked(id="a", score=1.0, fused=1.0),
        Ranked(id="b", score=0.95, fused=0.8),
        Ranked(id="c", score=0.9, fused=0.9),
    ]
    assert lifted_seeds(ranked, seeds_of(ranked)) == {"b"}
    assert lifted_seeds([Ranked(id="a", score=1.0)], {"a": 1.0}) == set()


def test_a_lifted_start_counts_only_with_a_path_through_the_top_result():
    # The top result "note" is unlinked; "decision" nearly ties it only through its links.
    seeds = {"note": 1.0, "decision": 0.94}
    assert best_chain(seeds, EDGES, CAUSE, through={"decision": "note"}) is None
    assert best_chain(seeds, EDGES, CAUSE).ids[0] == "decision"  # not lifted: its chain
    # The top result on the lifted start's chain: the chain is the top result's own.
    seeds = {"incident": 1.0, "decision": 0.9}
    chain = best_chain(seeds, EDGES, CAUSE, through={"decision": "incident"})
    assert chain.ids == ["decision", "incident"]
