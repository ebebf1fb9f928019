"""What the write path tells a writer and queues for a person when a new memory meets a stored
one: a change word inside another word says nothing changed, and a negation of the same claim is
a contradiction to decide, never an update to confirm with one click."""

from __future__ import annotations

import pytest

from apps.memories.models import PossibleUpdate
from apps.memories.services import memory_create
from apps.memories.updates import Kind, change_cues, claim_overlap, judge_pair

pytestmark = pytest.mark.django_db

CHECKLIST = "Release checklist: changelog, migrations reviewed, staging smoke test."
DEPLOYS = (
    "Production deploys happen on Tuesday afternoons once the release checklist is signed off."
)


@pytest.mark.parametrize(
    "text, cues",
    [
        ("Release checklist: changelog, migrations reviewed.", {}),
        ("The core switches are Arista; the exchange rates come from the bank.", {}),
        ("Our Redux reducers are pure; the browser extension syncs hourly.", {}),
        ("The design team is led by Rose.", {}),  # a name, not "rose" (went up)
        ("CI was migrated from Jenkins.", {"migrate": "migrated"}),
        ("We moved CI and changed the runners.", {"move": "moved", "change": "changed"}),
        ("Jenkins is no longer used.", {"no longer": "no longer"}),
        ("Rose: prices rose again.", {"rise": "rose", "again": "again"}),
    ],
)
def test_change_cues_are_whole_words_or_their_inflections(text, cues):
    assert change_cues(text) == cues


def test_a_negation_of_the_same_claim_is_a_contradiction_not_an_update():
    rule, against = (
        "Never commit API tokens to the repository.",
        "Commit the API tokens to the repository.",
    )
    assert claim_overlap(rule, against) == 1.0
    verdict = judge_pair(rule, against, 0.78)
    assert verdict.kind == Kind.CONTRADICTION and not verdict.is_update
    # With a change word it is an update again: "no longer" says the rule changed.
    assert judge_pair("We use Jenkins for CI.", "We no longer use Jenkins for CI.", 0.8).is_update
    # Both hold: a negation about something else is neither.
    assert (
        judge_pair(
            "The API does not accept XML request bodies.",
            "The API accepts JSON and form-encoded bodies.",
            0.63,
        ).kind
        is None
    )


def test_a_cue_inside_a_word_queues_nothing(namespace, embedding_model):
    memory_create(namespace=namespace, content=DEPLOYS)
    result = memory_create(namespace=namespace, content=CHECKLIST)
    assert result.possible_updates == [] and result.possible_contradictions == []
    assert not PossibleUpdate.objects.filter(namespace=namespace).exists()


def test_a_negated_rule_is_reported_and_queued_as_a_contradiction(namespace, embedding_model):
    rule = memory_create(
        namespace=namespace,
        content="Never commit API tokens to the repository.",
        tier="constitutional",
    ).memory
    result = memory_create(namespace=namespace, content="Commit the API tokens to the repository.")
    assert result.possible_updates == []
    assert [c["id"] for c in result.possible_contradictions] == [str(rule.pk)]
    answer = result.to_dict()
    assert answer["possible_updates"] == []
    assert answer["possible_contradictions"][0]["id"] == str(rule.pk)
    assert "negation" in answer["possible_contradictions"][0]["why"]
    queued = PossibleUpdate.objects.get(namespace=namespace)
    assert (queued.older_id, queued.kind) == (rule.pk, PossibleUpdate.Kind.CONTRADICTION)
