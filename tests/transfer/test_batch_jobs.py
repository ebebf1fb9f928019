"""The background batch runner stores a job whole or not at all, and once: a job a stopped
runner left is taken over, the stopped runner can no longer store it, and a job that fails
leaves nothing behind. Real database, real model; the runner called directly."""

from __future__ import annotations

import uuid

import pytest

from apps.memories.models import Memory
from apps.memories.services import memory_create
from apps.transfer import batch_jobs
from apps.transfer.models import BatchJob, BatchState

pytestmark = pytest.mark.django_db(transaction=True)


def _job(namespace, items, **fields) -> BatchJob:
    return BatchJob.objects.create(
        namespace=namespace, door="rest", items=items, total=len(items), **fields
    )


def test_a_job_left_running_is_taken_over_and_its_old_runner_cannot_store_it(
    namespace, embedding_model
):
    items = [{"content": f"Orphan note {i}: the kettle is in cupboard {i}."} for i in range(70)]
    stale_claim = uuid.uuid4()
    job = _job(namespace, items, state=BatchState.RUNNING, claim=stale_claim, done=40)

    assert batch_jobs.drain() == 1
    job.refresh_from_db()
    assert (job.state, job.done, job.created) == (BatchState.DONE, 70, 70)
    assert job.items == []  # kept only until stored
    assert Memory.objects.filter(namespace=namespace).count() == 70

    # The runner that stopped comes back with its old claim: it stores nothing.
    old = BatchJob(pk=job.pk, namespace=namespace, door="rest", items=items, total=70)
    old.claim = stale_claim
    assert batch_jobs._run(old) == 0
    assert Memory.objects.filter(namespace=namespace).count() == 70
    assert batch_jobs.drain() == 0  # nothing left


def test_a_job_that_fails_stores_none_of_its_items(namespace, embedding_model):
    kept = memory_create(namespace=namespace, content="The office moved to Leeds.").memory
    missing = str(uuid.uuid4())
    items = [
        {"content": "The office moved to York.", "supersedes": [str(kept.id)]},
        {"content": "The canteen opens at eight.", "supersedes": [missing]},
        {"content": "Parking is behind the station."},
    ]
    job = _job(namespace, items)

    assert batch_jobs.drain() == 1
    job.refresh_from_db()
    assert job.state == BatchState.FAILED
    assert list(job.errors) == ["items[1].supersedes[0]"]
    assert Memory.objects.filter(namespace=namespace).count() == 1  # only the one before
    kept.refresh_from_db()
    assert kept.valid_until is None  # the first item's supersede was not kept either


def test_jobs_run_oldest_first_and_progress_is_recorded(namespace, embedding_model):
    first = _job(namespace, [{"content": f"First job line {i}."} for i in range(3)])
    second = _job(namespace, [{"content": f"Second job line {i}."} for i in range(200)])
    seen = []
    original = batch_jobs._progress

    def spy(job, done):
        seen.append((str(job.pk), done))
        original(job, done)

    batch_jobs._progress = spy
    try:
        assert batch_jobs.drain() == 2
    finally:
        batch_jobs._progress = original
    order = list(dict.fromkeys(pk for pk, _ in seen))
    assert order == [str(first.pk), str(second.pk)]
    second_progress = [done for pk, done in seen if pk == str(second.pk)]
    assert second_progress == sorted(second_progress) and len(second_progress) >= 3
    assert second_progress[-1] == 200


def test_finished_jobs_are_forgotten_after_a_week(namespace):
    from datetime import timedelta

    from django.utils import timezone

    old = _job(namespace, [], state=BatchState.DONE, finished_at=timezone.now() - timedelta(days=8))
    recent = _job(namespace, [], state=BatchState.DONE, finished_at=timezone.now())
    assert batch_jobs.drain() == 0
    assert list(BatchJob.objects.values_list("pk", flat=True)) == [recent.pk]
    assert not BatchJob.objects.filter(pk=old.pk).exists()
