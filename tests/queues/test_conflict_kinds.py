"""The conflicts queue tells an update from a contradiction, lists a pair once whichever side
was written first, and never replaces a constitutional memory without an explicit
confirmation, whichever queue action would do it."""

from __future__ import annotations

import pytest

from apps.core.exceptions import ValidationFailed
from apps.memories import services
from apps.memories.models import PossibleUpdate
from apps.queues import services as queue
from apps.queues.jobs import near_duplicates_update
from apps.queues.models import DuplicatePair
from apps.queues.selectors import conflict_count, open_conflicts

pytestmark = pytest.mark.django_db

RULE = "Never commit API tokens to the repository."
AGAINST = "Commit the API tokens to the repository."


@pytest.fixture
def rule_pair(namespace, embedding_model):
    rule = services.memory_create(namespace=namespace, content=RULE, tier="constitutional").memory
    against = services.memory_create(namespace=namespace, content=AGAINST).memory
    return rule, against


def test_a_negation_is_listed_as_a_contradiction_with_no_supersede(namespace, rule_pair):
    rule, against = rule_pair
    [conflict] = open_conflicts(namespace=namespace)
    assert {conflict.first.pk, conflict.second.pk} == {rule.pk, against.pk}
    assert conflict.noticed_as == PossibleUpdate.Kind.CONTRADICTION
    assert not conflict.is_update


def test_a_pair_is_listed_once_whichever_side_was_written_first(namespace, embedding_model):
    old = services.memory_create(namespace=namespace, content="Our CI runs on Jenkins.").memory
    new = services.memory_create(
        namespace=namespace, content="We moved CI from Jenkins to GitHub Actions."
    ).memory
    assert PossibleUpdate.objects.filter(newer=new, older=old).exists()
    # The same pair noticed the other way round too (an edit, an import of the older text).
    PossibleUpdate.objects.create(
        namespace=namespace, newer=old, older=new, why="seen the other way", score=1.0
    )
    assert conflict_count(namespace=namespace) == 1
    [conflict] = open_conflicts(namespace=namespace)
    assert conflict.is_update


def test_keeping_the_other_side_of_a_constitutional_rule_needs_confirmation(namespace, rule_pair):
    rule, against = rule_pair
    with pytest.raises(ValidationFailed) as refused:
        queue.conflict_keep_one(keep=against, other=rule)
    assert "confirm_constitutional" in refused.value.errors
    with pytest.raises(ValidationFailed):
        queue.conflict_supersede(newer=against, older=rule)
    rule.refresh_from_db()
    assert not rule.archived and rule.valid_until is None
    assert conflict_count(namespace=namespace) == 1  # nothing was decided
    # Keeping the rule itself replaces nothing constitutional: no confirmation asked.
    queue.conflict_keep_one(keep=rule, other=against)
    against.refresh_from_db()
    assert against.archived


def test_a_confirmed_replacement_of_a_constitutional_rule_goes_ahead(namespace, rule_pair):
    rule, against = rule_pair
    queue.conflict_keep_one(keep=against, other=rule, confirm_constitutional=True)
    rule.refresh_from_db()
    assert rule.archived


def test_the_near_duplicates_queue_asks_the_same_confirmation(namespace, embedding_model):
    rule = services.memory_create(
        namespace=namespace,
        content="Deploys happen only on Tuesday afternoons.",
        tier="constitutional",
    ).memory
    services.memory_create(namespace=namespace, content="Deploys happen only on Tuesday afternoon.")
    near_duplicates_update(namespace)
    pair = DuplicatePair.objects.get(namespace=namespace)
    other = pair.second if pair.first == rule else pair.first
    for act in (
        lambda **kw: queue.pair_supersede(pair=pair, newer_id=other.pk, **kw),
        lambda **kw: queue.pair_merge(pair=pair, keep_id=other.pk, **kw),
    ):
        with pytest.raises(ValidationFailed) as refused:
            act()
        assert "confirm_constitutional" in refused.value.errors
    rule.refresh_from_db()
    assert not rule.archived
    queue.pair_supersede(pair=pair, newer_id=other.pk, confirm_constitutional=True)
    rule.refresh_from_db()
    assert rule.archived
