"""Writes that change the graph or feedback bring the derived data up to date (eager mode)."""

from __future__ import annotations

import pytest

from apps.jobs import debounce
from apps.jobs.models import Job, JobRun
from apps.memories.models import Memory, Relation
from apps.memories.services import edge_create, edge_delete


def scores(namespace) -> dict:
    return dict(Memory.objects.filter(namespace=namespace).values_list("id", "pagerank_score"))


def test_linking_memories_updates_pagerank_after_commit(
    namespace, memories_factory, django_capture_on_commit_callbacks
):
    a, b, c = memories_factory(namespace, 3)
    with django_capture_on_commit_callbacks(execute=False) as pending:
        edge = edge_create(source=a, target=b, relation=Relation.DEPENDS_ON)
    assert set(scores(namespace).values()) == {0.0}  # nothing runs before the commit
    for callback in pending:
        callback()

    after_link = scores(namespace)
    assert after_link[b.pk] > after_link[a.pk] == pytest.approx(after_link[c.pk])
    assert JobRun.objects.get(job=Job.PAGERANK).trigger == "write"

    with django_capture_on_commit_callbacks(execute=True):
        edge_delete(edge=edge)
    assert len(set(scores(namespace).values())) == 1  # all isolated again: all equal


def test_large_namespaces_skip_inline_pagerank(
    namespace, memories_factory, settings, django_capture_on_commit_callbacks
):
    settings.JOBS_INLINE_MAX_MEMORIES = 2
    a, b, _c = memories_factory(namespace, 3)
    with django_capture_on_commit_callbacks(execute=True):
        edge_create(source=a, target=b, relation=Relation.CAUSED)
    assert not JobRun.objects.exists()
    assert set(scores(namespace).values()) == {0.0}


def test_a_failing_job_never_breaks_the_write(
    namespace, memories_factory, django_capture_on_commit_callbacks, monkeypatch
):
    from apps.jobs import services

    def broken(**_kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setitem(services.JOBS, Job.PAGERANK, broken)
    a, b = memories_factory(namespace, 2)
    with django_capture_on_commit_callbacks(execute=True):
        edge_create(source=a, target=b, relation=Relation.CAUSED)
    run = JobRun.objects.get(job=Job.PAGERANK)
    assert run.status == "failed" and "disk on fire" in run.error


@pytest.fixture
def redis_debounce(settings):
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:6379/5"
    debounce._client.cache_clear()
    client = debounce.redis_client()
    client.delete(debounce.pending_key(Job.PAGERANK, 99))
    yield client
    client.delete(debounce.pending_key(Job.PAGERANK, 99))
    debounce._client.cache_clear()


def test_debounce_claims_once_until_the_run_starts(redis_debounce):
    assert debounce.claim(Job.PAGERANK, 99, countdown=5) is True
    assert debounce.claim(Job.PAGERANK, 99, countdown=5) is False  # burst: coalesced
    assert 0 < redis_debounce.ttl(debounce.pending_key(Job.PAGERANK, 99)) <= 605
    debounce.release(Job.PAGERANK, 99)  # the task starts
    assert debounce.claim(Job.PAGERANK, 99, countdown=5) is True  # a later change queues again


@pytest.fixture
def broker(settings, monkeypatch):
    """A real Celery broker setting: `point(url)` switches the app to it (not eager)."""
    from memoryhub.celery import app

    saved = app.conf.task_always_eager, app.conf.broker_url

    def point(url: str):
        settings.CELERY_BROKER_URL = url
        app.conf.task_always_eager, app.conf.broker_url = False, url
        monkeypatch.setattr(app, "_pool", None)  # new connections to the new broker
        monkeypatch.setattr(app.amqp, "_producer_pool", None)
        debounce._client.cache_clear()

    yield point
    app.conf.task_always_eager, app.conf.broker_url = saved
    debounce._client.cache_clear()


def test_jobs_asked_for_while_redis_is_down_are_queued_once_when_it_is_back(
    namespace, memories_factory, broker, django_capture_on_commit_callbacks
):
    import redis

    from apps.jobs.models import JobRequest
    from apps.jobs.triggers import drain_requests

    broker("redis://127.0.0.1:8498/2")  # nothing listens there: the broker is down
    a, b, c = memories_factory(namespace, 3)
    with django_capture_on_commit_callbacks(execute=True):
        edge_create(source=a, target=b, relation=Relation.CAUSED)  # the write succeeds
        edge_create(source=b, target=c, relation=Relation.CAUSED)
    assert list(JobRequest.objects.values_list("job", "namespace_id")) == [
        (Job.PAGERANK, namespace.pk)
    ]  # two writes, one kept request
    with pytest.raises(Exception):  # noqa: B017 - still down: nothing is dropped
        drain_requests()
    assert JobRequest.objects.count() == 1

    url = "redis://127.0.0.1:6379/2"
    queue = redis.Redis.from_url(url)
    queue.delete("celery", debounce.pending_key(Job.PAGERANK, namespace.pk))
    broker(url)  # Redis is back
    try:
        assert drain_requests() == 1
        assert drain_requests() == 0
        assert not JobRequest.objects.exists()
        assert queue.llen("celery") == 1  # one pagerank run queued for the worker
    finally:
        queue.delete("celery", debounce.pending_key(Job.PAGERANK, namespace.pk))
