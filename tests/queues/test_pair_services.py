"""Deciding a near-duplicate pair: merge folds one into the other as a recorded revision,
keep both closes the pair, and only editors may decide."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from apps.access.models import NamespaceMembership, Role
from apps.core.exceptions import PermissionDenied, ValidationFailed
from apps.history.selectors import revisions_for_memory
from apps.memories.models import CausalEdge, Memory, Relation
from apps.memories.services import memory_update
from apps.queues.models import DuplicatePair, PairStatus
from apps.queues.services import pair_keep_both, pair_merge
from tests import factories

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("embedding_model")]


def _pair(role=Role.EDITOR):
    ns = factories.namespace("dupes")
    a, b = factories.memories(ns, ["Deploys happen on Tuesday.", "Deploys happen on Tuesdays."])
    memory_update(memory=b, tags=["ops"])
    first, second = sorted([a, b], key=lambda m: str(m.pk))
    pair = DuplicatePair.objects.create(namespace=ns, first=first, second=second, similarity=0.97)
    user = get_user_model().objects.create_user("curator", password="x")
    NamespaceMembership.objects.create(user=user, namespace=ns, role=role)
    return pair, a, b, user


def test_merge_keeps_one_archives_the_other_and_records_it():
    pair, a, b, user = _pair()
    pair_merge(pair=pair, keep_id=a.pk, actor=user, door="ui")

    b.refresh_from_db()
    assert b.archived
    assert set(Memory.objects.get(pk=a.pk).tags.values_list("name", flat=True)) == {"ops"}
    assert CausalEdge.objects.filter(source=a, target=b, relation=Relation.SUPERSEDES).exists()
    assert DuplicatePair.objects.get(pk=pair.pk).status == PairStatus.MERGED
    latest = revisions_for_memory(b).first()
    assert latest.door == "ui" and latest.actor_user == user


def test_keep_both_closes_the_pair_and_changes_no_memory():
    pair, a, b, user = _pair()
    pair_keep_both(pair=pair, actor=user, door="ui")
    assert DuplicatePair.objects.get(pk=pair.pk).status == PairStatus.KEPT_BOTH
    assert not Memory.objects.filter(pk__in=[a.pk, b.pk], archived=True).exists()
    with pytest.raises(ValidationFailed):
        pair_merge(pair=pair, keep_id=a.pk, actor=user, door="ui")


def test_viewer_may_not_decide_and_keep_must_be_in_the_pair():
    pair, a, _, viewer = _pair(role=Role.VIEWER)
    with pytest.raises(PermissionDenied):
        pair_merge(pair=pair, keep_id=a.pk, actor=viewer, door="ui")
    with pytest.raises(PermissionDenied):
        pair_keep_both(pair=pair, actor=viewer, door="ui")
    stranger = factories.memories(factories.namespace("other"), ["Unrelated note."])[0]
    with pytest.raises(ValidationFailed):
        pair_merge(pair=pair, keep_id=stranger.pk)
    assert DuplicatePair.objects.get(pk=pair.pk).status == PairStatus.OPEN
