"""The lexical strategy's term counts are cached per namespace for a minute; a word the
namespace did not hold yet is counted again, so a memory is found by it right after it is
written."""

from __future__ import annotations

import pytest

from apps.search.pipeline import retrieve
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


def test_terms_a_search_counted_are_not_counted_again_within_the_minute(remember):
    from apps.memories.models import Namespace

    remember(["Redis is the Celery broker.", "Celery workers read the broker URL."])
    search(namespace="test-ns", query="celery broker")
    namespace_id = Namespace.objects.get(name="test-ns").id
    # No cursor at all: a query would fail, so both counts come from the cache.
    assert retrieve._document_frequencies(None, namespace_id, ("broker", "celeri")) == [2, 2]
