"""Acceptance: feedback crediting the keyword strategy raises its learned weight, and the next
search uses it (visible in its debug output)."""

from __future__ import annotations

import pytest

from apps.memories.services import memory_batch_create
from apps.search.feedback import feedback_record
from apps.search.models import QueryLog, StrategyWeights
from apps.search.services import search

QUERY = "Zanzibar deployment checklist"
CONTENTS = [
    "Zanzibar deployment checklist: drain the queue, run migrations, then flip the flag.",
    "The Zanzibar service keeps its deployment notes in the ops wiki.",
    "Postgres vacuum settings were tuned for the large events table.",
    "We chose Redis as the Celery broker because it is already in the stack.",
    "Login page shows a spinner forever when the session cookie expired.",
    "Prefer dataclasses over dicts for values passed between pipeline stages.",
]


def test_ten_useful_keyword_verdicts_raise_its_weight_in_the_next_search(
    namespace, embedding_model, settings, django_capture_on_commit_callbacks
):
    settings.SEARCH_QUERYLOG_SYNC = True
    memory_batch_create(namespace=namespace, items=[{"content": c} for c in CONTENTS])
    before = search(namespace=namespace, query=QUERY, include_debug=True, log=False).debug
    assert "keyword" not in before["learned_weights"]

    for _ in range(10):
        with django_capture_on_commit_callbacks(execute=True):
            response = search(namespace=namespace, query=QUERY, include_debug=True)
        log = QueryLog.objects.get(pk=response.query_log_id)
        keyword_hits = [r["id"] for r in log.results if "keyword" in r["ranks"]]
        assert keyword_hits, "the keyword strategy found nothing to credit"
        with django_capture_on_commit_callbacks(execute=True):
            feedback_record(
                query_log_id=log.pk,
                namespace=namespace,
                result_feedback={memory_id: True for memory_id in keyword_hits},
            )

    learned = StrategyWeights.objects.get(namespace=namespace, strategy="keyword")
    assert learned.sample_size == 10 and learned.weight > 1.0

    after = search(namespace=namespace, query=QUERY, include_debug=True, log=False).debug
    assert after["learned_weights"]["keyword"] == pytest.approx(learned.weight)
    assert after["weights"]["keyword"] == pytest.approx(
        before["weights"]["keyword"] * learned.weight, rel=1e-3
    )
