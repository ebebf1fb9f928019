"""`manage.py run_job` in-process, the beat schedule, and the admin's view of the last runs."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from apps.jobs.models import Job, JobRun
from apps.jobs.services import job_execute
from apps.memories.models import Relation
from memoryhub.celery import app


def test_run_job_prints_what_changed(namespace, memories_factory, edges_factory):
    a, b, _c = memories_factory(namespace, 3)
    edges_factory(namespace, [(a, b, Relation.CAUSED, 1.0)])
    out = StringIO()
    call_command("run_job", "pagerank", "--namespace", namespace.name, stdout=out)
    text = out.getvalue()
    assert "pagerank: succeeded" in text
    assert "memories_updated: 3" in text and "isolated: 1" in text
    assert JobRun.objects.get().trigger == "command"


def test_run_job_reembed_shows_progress(namespace, memories_factory, embedding_model):
    memories_factory(namespace, 4)
    out, err = StringIO(), StringIO()
    call_command("run_job", "reembed", stdout=out, stderr=err)
    assert "memories_updated: 4" in out.getvalue()
    assert "4/4" in err.getvalue()  # the tqdm bar


def test_run_job_rejects_unknown_namespace_and_async_without_broker(namespace):
    with pytest.raises(CommandError, match="No namespace"):
        call_command("run_job", "decay", "--namespace", "nope")
    with pytest.raises(CommandError, match="CELERY_BROKER_URL"):
        call_command("run_job", "decay", "--async")


def test_beat_schedules_every_periodic_job():
    app.loader.import_default_modules()
    entries = app.conf.beat_schedule.values()
    scheduled = {entry["task"] for entry in entries}
    assert scheduled == {
        "apps.jobs.tasks.run_job_task",
        "apps.jobs.tasks.drain_job_requests_task",
        "apps.search.tasks.analytics_rollup_task",
        "apps.search.tasks.namespace_changes_prune_task",
        "apps.memories.tasks.write_batch_jobs_task",
        "apps.access.tasks.access_cleanup_task",
        "apps.oauth.tasks.oauth_cleartokens_task",
    }
    jobs = {e["kwargs"]["job"] for e in entries if e["task"] == "apps.jobs.tasks.run_job_task"}
    assert jobs == set(Job.values)
    assert scheduled <= set(app.tasks)


def test_admin_shows_the_last_run_of_each_job_with_errors(
    admin_client, namespace, memories_factory, monkeypatch
):
    from apps.jobs import services

    memories_factory(namespace, 2)
    job_execute(Job.DECAY, namespace_id=namespace.pk)
    job_execute(Job.DECAY, namespace_id=namespace.pk)
    job_execute(Job.PAGERANK, namespace_id=namespace.pk)

    def broken(**_kwargs):
        raise RuntimeError("vector index missing")

    monkeypatch.setitem(services.JOBS, Job.REEMBED, broken)
    with pytest.raises(RuntimeError):
        job_execute(Job.REEMBED, namespace_id=namespace.pk)

    page = admin_client.get(reverse("admin:jobs_latestjobrun_changelist"))
    assert page.status_code == 200
    shown = page.context["cl"].result_list
    assert sorted(r.job for r in shown) == ["decay", "pagerank", "reembed"]  # one row per job
    html = page.content.decode()
    assert "RuntimeError: vector index missing" in html
    assert "memories_updated=2" in html

    failed = JobRun.objects.get(job=Job.REEMBED)
    detail = admin_client.get(reverse("admin:jobs_jobrun_change", args=[failed.pk]))
    assert detail.status_code == 200 and "vector index missing" in detail.content.decode()
    history = admin_client.get(reverse("admin:jobs_jobrun_changelist"))
    assert len(history.context["cl"].result_list) == 4


def test_admin_action_runs_the_selected_jobs_again(admin_client, namespace, memories_factory):
    memories_factory(namespace, 2)
    first = job_execute(Job.PAGERANK, namespace_id=namespace.pk)
    response = admin_client.post(
        reverse("admin:jobs_jobrun_changelist"),
        {"action": "run_again", "_selected_action": [first.pk]},
        follow=True,
    )
    assert response.status_code == 200 and "Started 1 job(s)." in response.content.decode()
    again = JobRun.objects.exclude(pk=first.pk).get()  # no broker in tests: ran in-process
    assert again.trigger == "admin" and again.status == "succeeded"


def test_a_job_for_a_deleted_namespace_is_a_quiet_no_op(namespace):
    gone = namespace.pk
    namespace.delete()
    run = job_execute(Job.PAGERANK, namespace_id=gone)
    assert run.pk is None and run.changes == {"namespaces": 0}
    assert not JobRun.objects.exists()
