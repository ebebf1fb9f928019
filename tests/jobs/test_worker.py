"""A real Celery worker against the Redis at 127.0.0.1:6379 runs every job through the broker.

The worker is a subprocess with CELERY_BROKER_URL set and EMBEDDED_DATABASE_NAME pointing at this
session's test database, so it sees what these (transactional) tests commit. The Redis db
(6..15, picked from the process id) keeps its queue and debounce keys apart from other test runs
sharing that server, whose namespace ids would otherwise collide with ours.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from apps.jobs import debounce
from apps.jobs.models import Job, JobRun
from apps.jobs.tasks import run_job_task
from apps.memories.models import Memory, Relation
from apps.memories.services import edge_create
from apps.search.models import QueryLog, StrategyWeights
from memoryhub.celery import app

BROKER = f"redis://127.0.0.1:6379/{6 + os.getpid() % 10}"
DEBOUNCE = 3  # seconds: long enough that the three links below always fall in one window
ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db(transaction=True)


def _reset_app_connections() -> None:
    app._after_fork()  # drop pooled broker connections
    app._backend_cache = None
    app._local.__dict__.pop("backend", None)


@pytest.fixture(scope="module")
def worker(django_db_setup, django_db_blocker, tmp_path_factory):
    import redis

    redis.Redis.from_url(BROKER).flushdb()
    log = tmp_path_factory.mktemp("worker") / "worker.log"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "memoryhub.settings.base",
        "CELERY_BROKER_URL": BROKER,
        "EMBEDDED_DATABASE_NAME": connection.settings_dict["NAME"],
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("DATABASE_URL", None)
    command = [sys.executable, "-m", "celery", "-A", "memoryhub", "worker", "--pool=solo"]
    command += ["--loglevel=INFO", f"--hostname=jobs-test-{os.getpid()}@%h"]
    with open(log, "w") as out:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=out)
    saved = {k: app.conf[k] for k in ("broker_url", "result_backend", "task_always_eager")}
    app.conf.update(broker_url=BROKER, result_backend=BROKER, task_always_eager=False)
    _reset_app_connections()
    try:
        deadline = time.monotonic() + 60
        while not app.control.ping(timeout=1.0):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"worker did not start:\n{log.read_text()[-3000:]}")
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
        app.conf.update(saved)
        _reset_app_connections()


@pytest.fixture
def broker_settings(settings, worker):
    settings.CELERY_BROKER_URL = BROKER
    settings.JOBS_DEBOUNCE_SECONDS = DEBOUNCE
    debounce._client.cache_clear()
    yield
    debounce._client.cache_clear()


def test_each_job_runs_on_the_worker(namespace, memories_factory, edges_factory, broker_settings):
    ms = memories_factory(namespace, 6)  # no vectors: reembed backfills them
    edges_factory(namespace, [(ms[i], ms[0], Relation.DEPENDS_ON, 1.0) for i in range(1, 5)])
    for i in range(10):
        QueryLog.objects.create(
            namespace=namespace,
            query=f"q{i}",
            results=[{"id": str(ms[0].pk), "score": 1.0, "ranks": {"keyword": 1}}],
            was_useful=True,
            feedback_at=timezone.now(),
        )
    Memory.objects.filter(pk=ms[5].pk).update(created_at=timezone.now() - timedelta(days=60))

    summaries = {}
    for job in Job.values:
        kwargs = {"job": job, "namespace_id": namespace.pk, "trigger": "command"}
        result = run_job_task.apply_async(kwargs=kwargs)
        summaries[job] = result.get(timeout=120)
        assert summaries[job]["status"] == "succeeded", summaries[job]

    runs = JobRun.objects.filter(namespace=namespace)
    assert {r.job for r in runs} == set(Job.values)
    assert all(not r.worker.endswith(f":{os.getpid()}") for r in runs)  # not this process
    scores = dict(Memory.objects.filter(namespace=namespace).values_list("id", "pagerank_score"))
    assert scores[ms[0].pk] == max(scores.values()) and sum(scores.values()) == pytest.approx(1)
    assert StrategyWeights.objects.get(namespace=namespace, strategy="keyword").weight == 1.8
    assert Memory.objects.get(pk=ms[5].pk).stability == pytest.approx(0.25, abs=1e-3)
    assert not Memory.objects.filter(namespace=namespace, embedding__isnull=True).exists()
    assert summaries[Job.REEMBED]["changes"]["backfilled"] == 6


def test_a_burst_of_links_queues_one_debounced_pagerank(
    namespace, memories_factory, broker_settings
):
    a, b, c, d = memories_factory(namespace, 4)
    for source, target in [(a, b), (c, b), (d, b)]:  # three commits in quick succession
        edge_create(source=source, target=target, relation=Relation.CAUSED)

    deadline = time.monotonic() + 30
    while not JobRun.objects.filter(job=Job.PAGERANK, status="succeeded").exists():
        assert time.monotonic() < deadline, "no PageRank run arrived from the worker"
        time.sleep(0.2)
    time.sleep(DEBOUNCE + 1.0)  # room for a (wrong) second run to show up

    runs = JobRun.objects.filter(job=Job.PAGERANK, namespace=namespace)
    assert [(r.trigger, r.status) for r in runs] == [("write", "succeeded")]
    b.refresh_from_db()
    assert b.pagerank_score == max(
        Memory.objects.filter(namespace=namespace).values_list("pagerank_score", flat=True)
    )
    assert runs[0].changes["edges"] == 3  # the one run saw every edge of the burst


def test_feedback_queues_the_weights_job_on_the_worker(namespace, broker_settings):
    from apps.search.feedback import feedback_record

    memory_id = "6f1c7c9e-0000-4000-8000-000000000001"
    for i in range(10):
        log = QueryLog.objects.create(
            namespace=namespace,
            query=f"q{i}",
            results=[{"id": memory_id, "score": 1.0, "ranks": {"keyword": 1}}],
        )
        feedback_record(query_log_id=log.pk, namespace=namespace, result_feedback={memory_id: True})

    deadline = time.monotonic() + 30
    while not StrategyWeights.objects.filter(namespace=namespace, sample_size=10).exists():
        assert time.monotonic() < deadline, "the worker never re-learned the weights"
        time.sleep(0.2)
    assert StrategyWeights.objects.get(namespace=namespace, strategy="keyword").weight == 1.8
    runs = JobRun.objects.filter(job=Job.FEEDBACK_WEIGHTS, namespace=namespace)
    assert {r.trigger for r in runs} == {"write"} and len(runs) <= 2  # coalesced


def test_run_job_async_waits_for_the_worker(namespace, memories_factory, broker_settings):
    memories_factory(namespace, 3)
    out = StringIO()
    call_command("run_job", "pagerank", "--namespace", namespace.name, "--async", stdout=out)
    assert "pagerank: succeeded" in out.getvalue()
    assert "memories_updated: 3" in out.getvalue()
    assert JobRun.objects.get(job=Job.PAGERANK).trigger == "command"


def test_a_large_batch_is_written_by_the_worker(namespace, broker_settings):
    from apps.transfer import batch_jobs
    from apps.transfer.models import BatchJob

    items = [{"content": f"Worker batch line {i}: the bins go out on day {i}."} for i in range(120)]
    job = batch_jobs.submit(
        namespace=namespace,
        items=items,
        on_duplicate="report",
        actor=None,
        door="rest",
        max_chars=None,
    )  # committed (transactional test): the wake-up goes to the broker

    deadline = time.monotonic() + 120
    while BatchJob.objects.get(pk=job.pk).state != "done":
        assert time.monotonic() < deadline, BatchJob.objects.get(pk=job.pk)
        time.sleep(0.2)
    assert (
        Memory.objects.filter(namespace=namespace, content__startswith="Worker batch").count()
        == 120
    )
    assert batch_jobs._thread is None or not batch_jobs._thread.is_alive()  # not this process
