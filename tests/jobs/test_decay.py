"""Decay: stability falls with idle time, at tier-specific speeds, and re-runs are no-ops."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.jobs.models import Job
from apps.jobs.services import job_execute
from apps.memories.models import Memory, Tier
from apps.search.jobs.decay import STABILITY_STEP, stability_value


def test_stability_by_tier_and_idle_time(namespace, memories_factory):
    now = timezone.now()
    idle = now - timedelta(days=30)
    rows = {
        tier: memories_factory(namespace, 1, tier=tier, last_accessed_at=idle)[0]
        for tier in Tier.values
    }
    fresh = memories_factory(namespace, 1, last_accessed_at=now)[0]
    used = memories_factory(namespace, 1, last_accessed_at=idle, access_count=20)[0]

    run = job_execute(Job.DECAY, namespace_id=namespace.pk, now=now)

    stability = dict(Memory.objects.filter(namespace=namespace).values_list("id", "stability"))
    by_tier = {tier: stability[m.pk] for tier, m in rows.items()}
    assert by_tier[Tier.SCRATCH] < by_tier[Tier.NORMAL] < by_tier[Tier.CORE]
    assert by_tier[Tier.CORE] < by_tier[Tier.CONSTITUTIONAL] < 1.0
    # Default half-life 30 days: a normal memory idle 30 days is at one half.
    assert by_tier[Tier.NORMAL] == pytest.approx(0.5, abs=1e-5)
    assert by_tier[Tier.SCRATCH] == pytest.approx(0.125, abs=1e-5)
    for tier, value in by_tier.items():
        assert value == pytest.approx(stability_value(tier=tier, days_idle=30), abs=1e-6)
    assert stability[fresh.pk] == pytest.approx(1.0, abs=1e-5)
    assert by_tier[Tier.NORMAL] < stability[used.pk] < 1.0  # frequent use slows decay
    assert run.changes["memories_updated"] == 5  # the fresh one stays at 1.0

    again = job_execute(Job.DECAY, namespace_id=namespace.pk, now=now)
    assert again.changes["memories_updated"] == 0


def test_a_memory_is_rewritten_when_it_moved_a_step_or_crossed_the_stale_line(
    namespace, memories_factory, settings
):
    """Each rewrite adds a row version to every index (the HNSW graph too): the hourly run
    leaves a value that drifted less than STABILITY_STEP, unless it crossed into the stale
    queue, which must show a fading memory on time."""
    settings.STALE_STABILITY_THRESHOLD = 0.2
    now = timezone.now()
    halfway = memories_factory(namespace, 1, last_accessed_at=now - timedelta(days=30))[0]
    # A scratch memory at 0.2003 now: under the 0.2 line within the hour.
    idle = timedelta(days=10 * math.log2(1 / 0.2003))
    fading = memories_factory(namespace, 1, tier=Tier.SCRATCH, last_accessed_at=now - idle)[0]
    job_execute(Job.DECAY, namespace_id=namespace.pk, now=now)

    hour = job_execute(Job.DECAY, namespace_id=namespace.pk, now=now + timedelta(hours=1))
    assert hour.changes["memories_updated"] == 1
    assert Memory.objects.get(pk=halfway.pk).stability == pytest.approx(0.5, abs=1e-5)
    assert Memory.objects.get(pk=fading.pk).stability < 0.2

    job_execute(Job.DECAY, namespace_id=namespace.pk, now=now + timedelta(days=1))
    expected = stability_value(tier=Tier.NORMAL, days_idle=31)
    assert 0.5 - expected > STABILITY_STEP  # a day's drift is more than a step
    assert Memory.objects.get(pk=halfway.pk).stability == pytest.approx(expected, abs=1e-6)


def test_never_accessed_counts_from_creation(namespace, memories_factory):
    memory = memories_factory(namespace, 1)[0]
    Memory.objects.filter(pk=memory.pk).update(created_at=timezone.now() - timedelta(days=60))
    job_execute(Job.DECAY, namespace_id=namespace.pk)
    memory.refresh_from_db()
    assert memory.stability == pytest.approx(0.25, abs=1e-4)


def test_search_results_count_as_accesses_exactly_once(namespace, memories_factory):
    from apps.search.models import QueryLog

    seen, unseen = memories_factory(namespace, 2)
    now = timezone.now()
    for minutes_ago in (90, 30, 0.5):  # the last one is too fresh: counted by a later run
        log = QueryLog.objects.create(
            namespace=namespace, query="q", results=[{"id": str(seen.pk), "ranks": {}}]
        )
        QueryLog.objects.filter(pk=log.pk).update(created_at=now - timedelta(minutes=minutes_ago))
    Memory.objects.filter(namespace=namespace).update(created_at=now - timedelta(days=30))

    run = job_execute(Job.DECAY, namespace_id=namespace.pk, now=now)
    job_execute(Job.DECAY, namespace_id=namespace.pk, now=now)  # again: nothing counted twice

    seen.refresh_from_db()
    unseen.refresh_from_db()
    assert seen.access_count == 2 and unseen.access_count == 0
    assert seen.last_accessed_at == now - timedelta(minutes=30)
    assert run.changes["memories_accessed"] == 1
    assert seen.stability > 0.99 and unseen.stability == pytest.approx(0.5, abs=1e-5)

    job_execute(Job.DECAY, namespace_id=namespace.pk, now=now + timedelta(minutes=5))
    seen.refresh_from_db()
    assert seen.access_count == 3
