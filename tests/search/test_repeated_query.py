"""What every search reads again is remembered: a query's stems (bounded, the ones the
database gave the first time), dialog ids' sort keys, a namespace's learned weights (until
they change)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.memories.natural_order import natural_key
from apps.search.models import StrategyWeights
from apps.search.pipeline.reads.lexical import STEMS_KEPT, forget_stems, stemmed_terms
from apps.search.pipeline.reads.weights import learned_weights

pytestmark = pytest.mark.django_db


def test_a_repeated_query_is_stemmed_once_with_the_same_terms():
    forget_stems()
    with CaptureQueriesContext(connection) as first:
        terms = stemmed_terms("Which databases were running slowly?")
    with CaptureQueriesContext(connection) as again:
        assert stemmed_terms("Which databases were running slowly?") == terms
    assert "databas" in terms and "run" in terms
    assert len(first.captured_queries) == 1 and len(again.captured_queries) == 0


def test_the_remembered_stems_are_bounded():
    forget_stems()
    for i in range(STEMS_KEPT + 10):
        stemmed_terms(f"query number {i}")
    with CaptureQueriesContext(connection) as newest:
        stemmed_terms(f"query number {STEMS_KEPT + 9}")
    with CaptureQueriesContext(connection) as oldest:  # gone first: stemmed again
        stemmed_terms("query number 0")
    assert len(newest.captured_queries) == 0 and len(oldest.captured_queries) == 1


def test_dialog_ids_sort_the_same_from_the_remembered_keys():
    """The neighbour chains sort dialog ids by natural_key on every search; it is remembered,
    bounded, and still puts D1:9 before D1:10."""
    ids = ["D1:10", "D1:9", "D2:1", "D1:9"]
    assert sorted(ids, key=natural_key) == ["D1:9", "D1:9", "D1:10", "D2:1"]
    assert natural_key("D1:9") is natural_key("D1:9")
    assert natural_key.cache_info().maxsize is not None


def test_learned_weights_are_read_once_and_a_change_is_seen_at_once(namespace):
    assert learned_weights(namespace.id) == {}
    with CaptureQueriesContext(connection) as again:
        assert learned_weights(namespace.id) == {}
    assert not again.captured_queries
    saved = StrategyWeights.objects.create(namespace=namespace, strategy="keyword", weight=1.8)
    assert learned_weights(namespace.id) == {"keyword": 1.8}
    saved.delete()
    assert learned_weights(namespace.id) == {}
