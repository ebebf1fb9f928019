"""The near-duplicate job finds a reworded pair through the index, stores it once, and never
reopens a pair the curator has decided about."""

from __future__ import annotations

import pytest

from apps.jobs.services import job_execute
from apps.queues.jobs import NEAR_DUPLICATES_JOB
from apps.queues.models import DuplicatePair, PairStatus
from tests import factories

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("embedding_model")]


def _seed():
    ns = factories.namespace("dupes")
    other = factories.namespace("elsewhere")
    a, b, c = factories.memories(
        ns,
        [
            "The staging database password rotates every 30 days.",
            "The staging database password rotates every thirty days.",
            "Lunch on Fridays is pizza in the kitchen.",
        ],
    )
    factories.memories(other, ["The staging database password rotates every 30 days!"])
    return ns, other, a, b, c


def test_finds_the_seeded_pair_and_is_idempotent(settings):
    settings.NEAR_DUPLICATE_THRESHOLD = 0.9
    ns, other, a, b, c = _seed()

    first = job_execute(NEAR_DUPLICATES_JOB, namespace_id=ns.pk)
    pairs = list(DuplicatePair.objects.filter(namespace=ns))
    assert len(pairs) == 1
    assert {pairs[0].first_id, pairs[0].second_id} == {a.pk, b.pk}
    assert pairs[0].similarity >= 0.9
    assert pairs[0].status == PairStatus.OPEN
    assert first.changes["pairs_added"] == 1

    second = job_execute(NEAR_DUPLICATES_JOB, namespace_id=ns.pk)
    assert second.changes["pairs_added"] == 0
    assert DuplicatePair.objects.filter(namespace=ns).count() == 1
    # Pairs never cross namespaces, even with near-identical text next door.
    assert not DuplicatePair.objects.filter(namespace=other).exists()


def test_a_decided_pair_never_comes_back(settings):
    settings.NEAR_DUPLICATE_THRESHOLD = 0.9
    ns, _, a, b, _ = _seed()
    job_execute(NEAR_DUPLICATES_JOB, namespace_id=ns.pk)
    DuplicatePair.objects.filter(namespace=ns).update(status=PairStatus.KEPT_BOTH)

    job_execute(NEAR_DUPLICATES_JOB, namespace_id=ns.pk)
    assert list(DuplicatePair.objects.filter(namespace=ns).values_list("status", flat=True)) == [
        PairStatus.KEPT_BOTH
    ]


def test_threshold_setting_is_respected(settings):
    settings.NEAR_DUPLICATE_THRESHOLD = 0.9999
    ns, *_ = _seed()
    job_execute(NEAR_DUPLICATES_JOB, namespace_id=ns.pk)
    assert not DuplicatePair.objects.filter(namespace=ns).exists()
