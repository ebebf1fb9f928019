"""Search that respects time: current by default (inside the candidate SQL), the successor of a
better-matching superseded fact, include_superseded, and as_of with the content of then."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.core.exceptions import ValidationFailed
from apps.memories.services import memory_create, memory_update
from apps.search.pipeline import retrieve
from apps.search.pipeline.scope import Scope
from apps.search.services import search

pytestmark = pytest.mark.django_db

QUERY = "What do we use for CI?"


@pytest.fixture
def ci(namespace, embedding_model):
    old = memory_create(
        namespace=namespace, content="Our CI runs on Jenkins.", created_at="2025-03-01"
    ).memory
    new = memory_create(
        namespace=namespace,
        content="CI was migrated from Jenkins to GitHub Actions.",
        created_at="2025-06-01",
        supersedes=[str(old.pk)],
    ).memory
    memory_create(
        namespace=namespace,
        content="Unit tests run on every pull request.",
        created_at="2025-01-01",
    )
    return old, new


def _ids(response):
    return [m["id"] for m in response.memories]


def test_default_search_never_returns_the_superseded_fact(namespace, ci):
    old, new = ci
    response = search(namespace=namespace, query=QUERY, log=False)
    assert str(old.pk) not in _ids(response)
    top = response.memories[0]
    assert top["id"] == str(new.pk)
    assert top["current"] is True and top["superseded_by"] is None
    assert top["supersedes"][0]["id"] == str(old.pk)  # "was Jenkins until June"
    assert top["supersedes"][0]["valid_until"].startswith("2025-06-01")
    assert "successor" in top["why"]  # the old fact's match brought its successor


def test_the_validity_filter_is_inside_the_candidate_queries(namespace, ci):
    old, _ = ci
    from django.utils import timezone

    scope = Scope(namespace_id=namespace.id, valid_at=timezone.now())
    assert str(old.pk) not in {r.id for r in retrieve.browse(scope, 10)}
    assert str(old.pk) not in retrieve.in_scope(scope, [str(old.pk)])


def test_include_superseded_returns_both_marked(namespace, ci):
    old, new = ci
    response = search(namespace=namespace, query=QUERY, include_superseded=True, log=False)
    by_id = {m["id"]: m for m in response.memories}
    assert by_id[str(old.pk)]["current"] is False
    assert by_id[str(old.pk)]["superseded_by"] == str(new.pk)
    assert by_id[str(new.pk)]["current"] is True


def test_as_of_answers_with_what_held_then(namespace, ci):
    old, new = ci
    response = search(namespace=namespace, query=QUERY, as_of="2025-04-15", log=False)
    ids = _ids(response)
    assert ids[0] == str(old.pk)
    assert str(new.pk) not in ids  # learnt later
    assert response.memories[0]["current"] is True
    assert response.memories[0]["superseded_by"] is None  # not known then


def test_as_of_shows_the_content_a_memory_had_then(namespace, embedding_model):
    memory = memory_create(
        namespace=namespace, content="Releases ship every two weeks.", created_at="2024-01-01"
    ).memory
    memory_update(memory=memory, content="Releases ship every week.", door="ui")
    from django.utils import timezone

    earlier = timezone.now()
    memory_update(memory=memory, content="Releases ship every day.", door="ui")
    now = search(namespace=namespace, query="How often do releases ship?", log=False)
    assert now.memories[0]["content"] == "Releases ship every day."
    then = search(
        namespace=namespace, query="How often do releases ship?", as_of=earlier, log=False
    )
    assert then.memories[0]["content"] == "Releases ship every week."


def test_a_bad_as_of_names_the_field(namespace):
    with pytest.raises(ValidationFailed) as caught:
        search(namespace=namespace, query="x", as_of="last tuesday-ish", log=False)
    assert "as_of" in caught.value.errors


def test_a_memory_with_no_validity_change_searches_as_before(namespace, embedding_model):
    memory = memory_create(namespace=namespace, content="Deploys need two approvals.").memory
    response = search(namespace=namespace, query="deploy approvals", log=False)
    item = response.memories[0]
    assert item["id"] == str(memory.pk)
    assert item["valid_until"] is None and item["supersedes"] == []
    assert item["valid_from"] == item["created_at"]


def _successor_reads(namespace) -> tuple[int, dict]:
    """How many statements looked for the successors of ended memories, and the top result."""
    with CaptureQueriesContext(connection) as captured:
        response = search(namespace=namespace, query=QUERY, log=False)
    reads = sum("WITH ended AS MATERIALIZED" in q["sql"] for q in captured.captured_queries)
    return reads, response.memories[0]


def test_a_kept_namespace_where_nothing_ended_sends_no_successor_read(namespace, embedding_model):
    old = memory_create(
        namespace=namespace, content="Our CI runs on Jenkins.", created_at="2025-03-01"
    ).memory
    memory_create(namespace=namespace, content="Unit tests run on every pull request.")
    search(namespace=namespace, query=QUERY, log=False)  # the process keeps the namespace now
    assert _successor_reads(namespace)[0] == 0
    new = memory_create(
        namespace=namespace,
        content="CI was migrated from Jenkins to GitHub Actions.",
        supersedes=[str(old.pk)],
    ).memory
    reads, top = _successor_reads(namespace)  # the old fact has ended: its successor is read
    assert reads == 1
    assert top["id"] == str(new.pk) and "successor" in top["why"]
