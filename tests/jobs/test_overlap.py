"""Two runs of the same job at once leave what one run leaves."""

from __future__ import annotations

import threading
import uuid
from datetime import timedelta

import pytest
from django.db import connection, connections
from django.utils import timezone

from apps.jobs.locks import lock_key
from apps.jobs.models import Job, JobRun
from apps.jobs.services import job_execute
from apps.memories.models import Memory, Relation
from apps.search.models import QueryLog, StrategyWeights

pytestmark = pytest.mark.django_db(transaction=True)


def run_twice_at_once(job: str, namespace_id: int, **options) -> list[JobRun]:
    """Hold the job's lock, start two runs (both block on it), release: they overlap fully."""
    runs, errors = [], []

    def worker():
        try:
            runs.append(job_execute(job, namespace_id=namespace_id, **options))
        except Exception as exc:  # surfaced below
            errors.append(exc)
        finally:
            connections.close_all()

    key = lock_key(job, namespace_id)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s, %s)", key)
        threads = [threading.Thread(target=worker) for _ in range(2)]
        for thread in threads:
            thread.start()
        _wait_for_waiters(cursor, key, 2)
        cursor.execute("SELECT pg_advisory_unlock(%s, %s)", key)
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
    assert len(runs) == 2
    return runs


def _wait_for_waiters(cursor, key, count):
    for _ in range(200):
        cursor.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
            "AND classid = %s AND objid = %s",
            [key[0] & 0xFFFFFFFF, key[1]],
        )
        if cursor.fetchone()[0] >= count:
            return
        threading.Event().wait(0.05)
    raise AssertionError("the two runs never queued on the lock")


def test_pagerank_overlap(namespace, memories_factory, edges_factory):
    ms = memories_factory(namespace, 12)
    edges_factory(
        namespace, [(ms[i], ms[(i * 5 + 1) % 12], Relation.CAUSED, 0.5) for i in range(12)]
    )
    job_execute(Job.PAGERANK, namespace_id=namespace.pk)
    once = dict(Memory.objects.filter(namespace=namespace).values_list("id", "pagerank_score"))
    Memory.objects.filter(namespace=namespace).update(pagerank_score=0)

    runs = run_twice_at_once(Job.PAGERANK, namespace.pk)

    twice = dict(Memory.objects.filter(namespace=namespace).values_list("id", "pagerank_score"))
    assert twice == once
    assert sorted(r.changes["memories_updated"] for r in runs) == [0, 12]


def test_feedback_weights_overlap(namespace):
    for i in range(30):
        memory_id = str(uuid.uuid4())
        QueryLog.objects.create(
            namespace=namespace,
            query=f"q{i}",
            results=[{"id": memory_id, "score": 1.0, "ranks": {"keyword": 1, "semantic": 3}}],
            result_feedback={memory_id: i % 3 != 0},
            feedback_at=timezone.now(),
        )
    run_twice_at_once(Job.FEEDBACK_WEIGHTS, namespace.pk)
    rows = list(
        StrategyWeights.objects.filter(namespace=namespace).values_list("strategy", "weight")
    )
    assert dict(rows) == {
        "keyword": pytest.approx(0.2 + 20 / 30 * 1.6),
        "semantic": pytest.approx(0.2 + 20 / 30 * 1.6),
    }


def test_decay_overlap(namespace, memories_factory):
    now = timezone.now()
    memories_factory(namespace, 10, last_accessed_at=now - timedelta(days=10))
    runs = run_twice_at_once(Job.DECAY, namespace.pk, now=now)
    values = set(Memory.objects.filter(namespace=namespace).values_list("stability", flat=True))
    assert len(values) == 1 and values.pop() == pytest.approx(0.5 ** (10 / 30), abs=1e-6)
    assert sorted(r.changes["memories_updated"] for r in runs) == [0, 10]


def test_reembed_overlap(namespace, memories_factory, embedding_model):
    memories_factory(namespace, 8)
    runs = run_twice_at_once(Job.REEMBED, namespace.pk, batch_size=3)
    assert sorted(r.changes["memories_updated"] for r in runs) == [0, 8]
    assert not Memory.objects.filter(namespace=namespace, embedding__isnull=True).exists()
