"""The in-server scheduler (no broker): one per database, due entries only, no re-run of the
daily jobs after a restart; and the `recent` runs it makes every minute touch only what
changed (usage counts of new searches, near-duplicates of new memories, an import included)."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.history.models import MemoryRevision
from apps.jobs.models import Job, JobRun
from apps.jobs.scheduler import Entry, Scheduler
from apps.jobs.services import job_execute
from apps.memories.models import Memory
from apps.queues.models import DuplicatePair
from apps.search.models import QueryLog
from tests import factories


def _scheduler(*entries: Entry) -> Scheduler:
    return Scheduler(list(entries), tick=1, first_delay=0)


@pytest.mark.django_db
def test_one_scheduler_holds_the_lease_until_its_process_lets_go():
    first, second = _scheduler(), _scheduler()
    try:
        assert first._hold_lease()
        assert first._hold_lease()  # still held on the next tick
        assert not second._hold_lease()
        first._drop_lease()  # its process ended: the lock went with its connection
        assert second._hold_lease()
    finally:
        first._drop_lease()
        second._drop_lease()


@pytest.mark.django_db(transaction=True)
def test_due_entries_run_once_and_a_restart_does_not_run_them_again(namespace):
    daily = Entry("trash-purge", 24 * 3600, Job.TRASH_PURGE)
    scheduler = _scheduler(daily)
    try:
        assert scheduler._hold_lease() and scheduler.due(timezone.now().timestamp()) == [daily]
        scheduler.run_due()
        scheduler.run_due()  # no longer due
        scheduler._slow.join(timeout=60)
    finally:
        scheduler._drop_lease()
    assert JobRun.objects.filter(job=Job.TRASH_PURGE, trigger="scheduler").count() == 1

    restarted = _scheduler(daily)
    try:
        assert restarted._hold_lease()  # reads the last runs from JobRun
        assert restarted.due(timezone.now().timestamp()) == []
    finally:
        restarted._drop_lease()


@pytest.mark.django_db(transaction=True)
def test_a_long_job_does_not_hold_up_the_quick_ones(namespace):
    started, release = threading.Event(), threading.Event()

    def long_job():
        started.set()
        release.wait(timeout=60)

    quick = Entry("usage", 60, Job.DECAY, options={"recent": True}, quick=True)
    scheduler = _scheduler(Entry("reembed-all", 600, call=long_job), quick)
    try:
        scheduler.run_due()
        assert started.wait(timeout=10) and scheduler.busy()
        # The usage counts ran meanwhile, in the scheduler's own thread.
        assert JobRun.objects.filter(job=Job.DECAY, status="succeeded").exists()
        scheduler.last["usage"] = 0.0
        scheduler.run_due()  # due again: runs although the long job is still at work
        assert JobRun.objects.filter(job=Job.DECAY).count() == 2 and scheduler.busy()
    finally:
        release.set()
        scheduler._slow.join(timeout=10)


@pytest.mark.django_db
def test_recent_decay_counts_new_searches_and_leaves_other_memories_alone(
    namespace, memories_factory
):
    seen, other = memories_factory(namespace, 2)
    Memory.objects.filter(pk=seen.pk).update(stability=0.5)  # faded; the access lifts it
    Memory.objects.filter(pk=other.pk).update(stability=0.123)
    log = QueryLog.objects.create(namespace=namespace, query="q", results=[{"id": str(seen.pk)}])
    QueryLog.objects.filter(pk=log.pk).update(created_at=timezone.now() - timedelta(minutes=2))

    run = job_execute(Job.DECAY, namespace_id=namespace.pk, recent=True)

    assert run.changes["memories_accessed"] == 1 and run.changes["memories_updated"] == 1
    seen.refresh_from_db()
    assert seen.access_count == 1 and seen.stability == pytest.approx(1.0, abs=1e-4)
    assert Memory.objects.get(pk=other.pk).stability == 0.123  # left to the hourly run
    job_execute(Job.DECAY, namespace_id=namespace.pk)
    assert Memory.objects.get(pk=other.pk).stability == pytest.approx(1.0, abs=1e-4)


@pytest.mark.django_db
def test_recent_near_duplicates_compare_only_what_changed_an_old_import_included(
    embedding_model, settings
):
    settings.NEAR_DUPLICATE_THRESHOLD = 0.9
    ns = factories.namespace("dupes")
    old, twin, lunch = factories.memories(
        ns,
        [
            "The staging database password rotates every 30 days.",
            "The staging database password rotates every thirty days.",
            "Lunch on Fridays is pizza in the kitchen.",
        ],
    )
    MemoryRevision.objects.update(created_at=timezone.now() - timedelta(hours=2))
    job_execute(Job.NEAR_DUPLICATES, namespace_id=ns.pk, recent=True)  # first run: everything
    assert DuplicatePair.objects.filter(namespace=ns).count() == 1

    # An imported record keeps its own (old) dates: the run still finds it by its history.
    imported = factories.memories(
        ns, [{"content": "Lunch on Fridays is pizza in the kitchen!", "created_at": "2021-03-01"}]
    )[0]
    assert imported.updated_at.year == 2021
    run = job_execute(Job.NEAR_DUPLICATES, namespace_id=ns.pk, recent=True)

    assert run.changes["pairs_found"] == 1 and run.changes["pairs_added"] == 1
    newest = DuplicatePair.objects.filter(namespace=ns).order_by("-id").first()
    assert {newest.first_id, newest.second_id} == {lunch.pk, imported.pk}
    assert {old.pk, twin.pk} != {newest.first_id, newest.second_id}


@pytest.mark.django_db
def test_recent_near_duplicates_work_off_a_bulk_import_a_bounded_part_per_run(
    embedding_model, settings, monkeypatch
):
    """One import stamps its revisions alike: each run compares at most RECENT_MAX of them and
    the next goes on where it stopped, until each memory was compared once."""
    from apps.jobs.models import JobCursor
    from apps.queues import jobs

    monkeypatch.setattr(jobs, "RECENT_MAX", 2)
    monkeypatch.setattr(jobs, "SLICE", 1)
    settings.NEAR_DUPLICATE_THRESHOLD = 0.9
    ns = factories.namespace("bulk")
    factories.memories(
        ns,
        [
            "The staging database password rotates every 30 days.",
            "Lunch on Fridays is pizza in the kitchen.",
            "Our on-call rotation changes every Monday at nine.",
            "The office plants are watered on Wednesdays.",
            "The staging database password rotates every thirty days.",
        ],
    )
    MemoryRevision.objects.filter(namespace_id=ns.pk).update(
        created_at=timezone.now() - timedelta(minutes=5)
    )

    runs = [job_execute(Job.NEAR_DUPLICATES, namespace_id=ns.pk, recent=True) for _ in range(4)]
    compared = [(r.changes["compared"], r.changes["namespaces_behind"]) for r in runs]
    assert compared == [(2, 1), (2, 1), (1, 0), (0, 0)]
    pair = DuplicatePair.objects.get(namespace=ns)
    assert (
        "thirty"
        in Memory.objects.get(pk=pair.second_id).content
        + Memory.objects.get(pk=pair.first_id).content
    )
    assert JobCursor.objects.get(job=Job.NEAR_DUPLICATES, namespace=ns).after_id is None

    # The whole-namespace pass, one slice of one memory at a time, finds the same pair again.
    run = job_execute(Job.NEAR_DUPLICATES, namespace_id=ns.pk)
    assert (run.changes["pairs_found"], run.changes["pairs_added"]) == (1, 0)
