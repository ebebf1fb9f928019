"""REST refuses unknown fields and out-of-range dates with a 400 naming them."""

from __future__ import annotations

import pytest

from apps.memories.models import Memory

from .live import bearer


def test_unknown_field_on_create_is_named(api, tokens):
    response = api.post(
        "/memories/", json={"content": "x", "colour": "red"}, headers=bearer(tokens.alpha_rw)
    )
    assert response.status_code == 400
    assert "colour" in response.json()["errors"]
    assert not Memory.objects.exists()


def test_unknown_field_on_update_is_named(api, tokens):
    created = api.post("/memories/", json={"content": "x"}, headers=bearer(tokens.alpha_rw))
    memory_id = created.json()["memory"]["id"]
    response = api.patch(
        f"/memories/{memory_id}/", json={"namespace": "beta"}, headers=bearer(tokens.alpha_rw)
    )
    assert response.status_code == 400
    assert "namespace" in response.json()["errors"]


def test_unknown_field_inside_a_batch_item_is_named(api, tokens):
    body = {"items": [{"content": "a"}, {"content": "b", "tittle": "typo"}]}
    response = api.post("/memories/batch/", json=body, headers=bearer(tokens.alpha_rw))
    assert response.status_code == 400
    assert "items[1].tittle" in response.json()["errors"]


def test_a_batch_is_bounded_by_its_total_characters(api, tokens, settings):
    settings.MEMORY_BATCH_MAX_CHARS = 1_000
    items = [{"content": f"{i} " + "words of a long batch " * 10} for i in range(5)]  # ~1,100
    response = api.post("/memories/batch/", json={"items": items}, headers=bearer(tokens.alpha_rw))
    assert response.status_code == 400
    assert "limit per request is 1000" in response.json()["errors"]["items"][0]
    assert not Memory.objects.exists()
    response = api.post(
        "/memories/batch/", json={"items": items[:4]}, headers=bearer(tokens.alpha_rw)
    )
    assert response.status_code == 201 and Memory.objects.count() == 4


@pytest.mark.parametrize(
    ("params", "status", "field"),
    [
        ({"after": "9999-12-31"}, 400, "after"),
        ({"before": "0001-01-01T00:00:00+14:00"}, 400, "before"),
        ({"after": "1970-01-01T00:00:00Z"}, 200, None),
    ],
)
def test_list_filter_dates(api, tokens, params, status, field):
    response = api.get("/memories/", params=params, headers=bearer(tokens.alpha_rw))
    assert response.status_code == status
    if field:
        assert field in response.json()["errors"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"query": "notes", "time_expr": "last 3000 years"}, "time_expr"),
        ({"query": "notes", "time_expr": "9999"}, "time_expr"),
        ({"query": "notes", "after": "9999-12-31T23:59:59-14:00"}, "after"),
        ({"query": "notes", "colour": "red"}, "colour"),
    ],
)
def test_search_refuses_out_of_range_times(api, tokens, body, field):
    response = api.post("/search/", json=body, headers=bearer(tokens.alpha_rw))
    assert response.status_code == 400
    assert field in response.json()["errors"]


@pytest.mark.parametrize("query", ["what happened in the last 3000 years", "notes from 9999"])
def test_time_words_in_a_plain_query_never_crash(api, tokens, query):
    response = api.post("/search/", json={"query": query}, headers=bearer(tokens.alpha_rw))
    assert response.status_code == 200
