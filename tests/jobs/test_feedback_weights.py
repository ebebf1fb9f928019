"""Feedback entries, the learned weight formula, and feedback_record's validation."""

from __future__ import annotations

import uuid

import pytest

from apps.core.exceptions import NotFound, ValidationFailed
from apps.jobs.models import Job, JobRun
from apps.jobs.services import job_execute
from apps.search.feedback import feedback_record
from apps.search.models import QueryLog, StrategyWeights


def search_log(namespace, results) -> QueryLog:
    """What a search leaves behind: results with the ranks of the strategies that found them."""
    return QueryLog.objects.create(namespace=namespace, query="q", results=results)


def two_results():
    kw, sem = str(uuid.uuid4()), str(uuid.uuid4())
    return (
        kw,
        sem,
        [
            {"id": kw, "score": 0.9, "ranks": {"keyword": 1}},
            {"id": sem, "score": 0.5, "ranks": {"semantic": 1, "graph": 2}},
        ],
    )


def weights(namespace) -> dict:
    return {w.strategy: w for w in StrategyWeights.objects.filter(namespace=namespace)}


def test_keyword_credited_useful_ten_times_learns_weight_above_one(
    namespace, django_capture_on_commit_callbacks
):
    for _ in range(10):
        kw, sem, results = two_results()
        log = search_log(namespace, results)
        with django_capture_on_commit_callbacks(execute=True):
            feedback_record(
                query_log_id=log.pk,
                namespace=namespace,
                result_feedback={kw: True, sem: False},
            )

    learned = weights(namespace)
    assert learned["keyword"].weight == pytest.approx(1.8)  # rate 1.0 -> 0.2 + 1.6
    assert learned["keyword"].sample_size == 10 and learned["keyword"].usefulness_rate == 1.0
    assert learned["semantic"].weight == pytest.approx(0.2)  # every credited result was useless
    assert JobRun.objects.filter(job=Job.FEEDBACK_WEIGHTS, trigger="write").count() == 10


def test_fewer_than_ten_entries_keep_the_neutral_weight(namespace):
    for _ in range(9):
        kw, _sem, results = two_results()
        feedback_record(
            query_log_id=search_log(namespace, results).pk,
            namespace=namespace,
            result_feedback={kw: True},
        )
    job_execute(Job.FEEDBACK_WEIGHTS, namespace_id=namespace.pk)
    assert weights(namespace)["keyword"].weight == 1.0
    assert weights(namespace)["keyword"].sample_size == 9
    assert "semantic" not in weights(namespace)  # no verdict touched its results


def test_overall_verdict_and_window_of_latest_hundred(namespace):
    # 100 old "useless" searches, then 60 newer "useful" ones: the window sees 60 useful of 100.
    for useful in [False] * 100 + [True] * 60:
        _kw, _sem, results = two_results()
        feedback_record(
            query_log_id=search_log(namespace, results).pk, namespace=namespace, was_useful=useful
        )
    run = job_execute(Job.FEEDBACK_WEIGHTS, namespace_id=namespace.pk)
    keyword = weights(namespace)["keyword"]
    assert keyword.sample_size == 100
    assert keyword.usefulness_rate == pytest.approx(0.6)
    assert keyword.weight == pytest.approx(0.2 + 0.6 * 1.6)
    assert run.changes["strategies_updated"] == 3  # keyword, semantic, graph

    assert (
        job_execute(Job.FEEDBACK_WEIGHTS, namespace_id=namespace.pk).changes["strategies_updated"]
        == 0
    )


def test_per_result_verdicts_merge_and_are_validated(namespace, other_namespace):
    kw, sem, results = two_results()
    log = search_log(namespace, results)
    feedback_record(query_log_id=log.pk, namespace=namespace, result_feedback={kw: True})
    feedback_record(query_log_id=log.pk, namespace=namespace, result_feedback={sem: False})
    log.refresh_from_db()
    assert log.result_feedback == {kw: True, sem: False} and log.feedback_at is not None

    with pytest.raises(ValidationFailed) as stranger:
        feedback_record(
            query_log_id=log.pk, namespace=namespace, result_feedback={str(uuid.uuid4()): True}
        )
    assert "result_feedback" in stranger.value.errors
    with pytest.raises(ValidationFailed) as empty:
        feedback_record(query_log_id=log.pk, namespace=namespace)
    assert "was_useful" in empty.value.errors
    with pytest.raises(ValidationFailed):
        feedback_record(query_log_id=log.pk, namespace=namespace, result_feedback={kw: "yes"})
    with pytest.raises(NotFound):
        feedback_record(query_log_id=log.pk, namespace=other_namespace, was_useful=True)
