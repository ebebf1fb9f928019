"""The lexical strategy's term counts are cached per namespace for a minute; a word the
namespace did not hold yet is counted again, so a memory is found by it right after it is
written."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.search.services import search

pytestmark = pytest.mark.django_db


def _keyword_ids(response):
    return [m["id"] for m in response.memories if "keyword" in m["why"]]


def test_a_word_new_to_the_namespace_is_found_right_after_it_is_written(remember):
    remember(["Redis is the Celery broker.", "The staging server runs on port 8080."])
    before = search(namespace="test-ns", query="zanzibar rollout")
    assert _keyword_ids(before) == []
    (note,) = remember(["The zanzibar rollout starts on Monday."])
    after = search(namespace="test-ns", query="zanzibar rollout")
    assert _keyword_ids(after)[:1] == [str(note.id)]


def test_a_repeated_search_does_not_count_its_terms_again(remember):
    remember(["Redis is the Celery broker.", "Celery workers read the broker URL."])
    first = search(namespace="test-ns", query="celery broker")
    with CaptureQueriesContext(connection) as captured:
        again = search(namespace="test-ns", query="celery broker")
    assert [m["id"] for m in again.memories] == [m["id"] for m in first.memories]
    counts = [
        q["sql"]
        for q in captured.captured_queries
        if "count(*)" in q["sql"] and "search_vector @@" in q["sql"]
    ]
    assert counts == []
