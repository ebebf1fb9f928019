"""The trash purge runs as a registered job: per namespace, recorded as a JobRun, idempotent."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from apps.history.models import TrashEntry
from apps.jobs.models import Job, JobRun
from apps.jobs.services import job_execute
from apps.memories.services import memory_create, memory_delete
from memoryhub.celery import app

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("embedding_model")]


def _trash(namespace, content, days_ago):
    memory = memory_create(namespace=namespace, content=content).memory
    memory_id = memory.pk
    memory_delete(memory=memory)
    TrashEntry.objects.filter(memory_id=memory_id).update(
        deleted_at=timezone.now() - timedelta(days=days_ago)
    )
    return memory_id


def test_purge_job_drops_expired_entries_of_every_namespace(namespace, other_namespace):
    _trash(namespace, "Expired here", 40)
    kept = _trash(namespace, "Recent here", 2)
    _trash(other_namespace, "Expired there", 31)

    run = job_execute(Job.TRASH_PURGE, trigger="beat")

    assert run.changes["purged"] == 2 and run.changes["namespaces"] == 2
    assert list(TrashEntry.objects.values_list("memory_id", flat=True)) == [kept]
    again = job_execute(Job.TRASH_PURGE, namespace_id=namespace.pk)
    assert again.changes["purged"] == 0
    assert JobRun.objects.filter(job=Job.TRASH_PURGE).count() == 2


def test_purge_is_on_the_beat_schedule_and_run_job(namespace, capsys):
    scheduled = [entry.get("kwargs", {}) for entry in app.conf.beat_schedule.values()]
    assert {"job": "trash_purge", "trigger": "beat"} in scheduled
    _trash(namespace, "Old enough", 45)
    call_command("run_job", "trash_purge")
    assert not TrashEntry.objects.exists()
    assert '"purged": 1' in capsys.readouterr().out
