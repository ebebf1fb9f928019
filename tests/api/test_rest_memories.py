"""REST memories over real HTTP: create, batch, list with filters and pagination, read,
update, delete; limits and errors that name the field."""

from __future__ import annotations

import pytest

from apps.memories.models import Memory

from .live import bearer


@pytest.fixture
def alpha(api, tokens, embedding_model):
    """Post to alpha with its read-write token."""

    def post(path, body, **kw):
        return api.post(path, json=body, headers=bearer(tokens.alpha_rw), **kw)

    return post


def test_create_read_update_delete(api, tokens, alpha):
    created = alpha(
        "/memories/",
        {"content": "Use uv to install dependencies.", "category": "pattern", "tags": ["tooling"]},
    )
    assert created.status_code == 201, created.text
    body = created.json()
    memory_id = body["memory"]["id"]
    assert body["created"] is True
    assert body["memory"]["namespace"] == "alpha"
    assert body["memory"]["tags"] == ["tooling"]

    duplicate = alpha("/memories/", {"content": "Use uv to install dependencies."})
    assert duplicate.status_code == 200
    assert duplicate.json()["duplicate_of"] == memory_id

    auth = bearer(tokens.alpha_rw)
    read = api.get(f"/memories/{memory_id}/", headers=auth)
    assert read.status_code == 200 and read.json()["content"].startswith("Use uv")

    patched = api.patch(
        f"/memories/{memory_id}/", json={"title": "Installing", "tier": "core"}, headers=auth
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["title"] == "Installing" and patched.json()["tier"] == "core"
    assert Memory.objects.get(pk=memory_id).tier == "core"

    assert api.delete(f"/memories/{memory_id}/", headers=auth).status_code == 204
    assert api.get(f"/memories/{memory_id}/", headers=auth).status_code == 404


def test_list_filters_and_paginates(api, tokens, alpha):
    batch = alpha(
        "/memories/batch/",
        {
            "items": [
                {"content": f"Fact number {i}", "category": "fact", "tags": ["numbers"]}
                for i in range(5)
            ]
            + [
                {"content": "A decision about logging.", "category": "decision"},
                {
                    "content": "Old note.",
                    "created_at": "2020-01-01T00:00:00Z",
                    "file_path": "src/app.py",
                },
            ]
        },
    )
    assert batch.status_code == 201, batch.text
    assert batch.json()["created"] == 7
    auth = bearer(tokens.alpha_rw)

    page = api.get("/memories/", params={"limit": 3, "offset": 0}, headers=auth).json()
    assert page["count"] == 7 and len(page["results"]) == 3 and page["next"]
    rest = api.get("/memories/", params={"limit": 3, "offset": 6}, headers=auth).json()
    assert [m["content"] for m in rest["results"]] == ["Old note."]

    def contents(**params):
        response = api.get("/memories/", params=params, headers=auth)
        assert response.status_code == 200, response.text
        return {m["content"] for m in response.json()["results"]}

    assert contents(category="decision") == {"A decision about logging."}
    assert len(contents(tags="numbers")) == 5
    assert contents(file_path="src/app.py") == {"Old note."}
    assert contents(before="2021-01-01") == {"Old note."}
    assert "Old note." not in contents(after="2021-01-01T00:00:00Z")


def test_batch_is_all_or_nothing_and_names_the_item(api, tokens, alpha):
    response = alpha(
        "/memories/batch/",
        {"items": [{"content": "good"}, {"content": "also good"}, {"category": "fact"}]},
    )
    assert response.status_code == 400
    assert "items[2].content" in response.json()["errors"]
    assert Memory.objects.count() == 0


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"content": ""}, "content"),
        ({"content": "x", "category": "gossip"}, "category"),
        ({"content": "x", "importance": 3}, "importance"),
        ({"content": "x", "created_at": "yesterday-ish"}, "created_at"),
        ({"content": "x", "namespace": "Not A Slug!"}, "namespace"),
        ({"title": "no content"}, "content"),
    ],
)
def test_bad_input_names_the_field(api, tokens, alpha, body, field):
    response = alpha("/memories/", body)
    assert response.status_code in (400, 404), response.text
    payload = response.json()
    if response.status_code == 400:
        assert field in payload["errors"]
    assert payload["detail"]


def test_limits_are_enforced_with_clear_errors(api, tokens, alpha, settings):
    auth = bearer(tokens.alpha_rw)
    too_many = api.get("/memories/", params={"limit": 101}, headers=auth)
    assert too_many.status_code == 400 and "limit" in too_many.json()["errors"]
    too_long = alpha("/memories/", {"content": "x" * (settings.MEMORY_MAX_CONTENT_CHARS + 1)})
    assert too_long.status_code == 400 and "content" in too_long.json()["errors"]
    big_batch = alpha(
        "/memories/batch/",
        {"items": [{"content": "x"}] * (settings.MEMORY_BATCH_MAX_ITEMS + 1)},
    )
    assert big_batch.status_code == 400 and "items" in big_batch.json()["errors"]
    huge = api.post(
        "/memories/",
        content=b'{"content": "' + b"y" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 10) + b'"}',
        headers={**auth, "Content-Type": "application/json"},
    )
    assert huge.status_code == 413 and "limit" in huge.json()["detail"]
    assert Memory.objects.count() == 0


def test_a_stuck_embedding_model_answers_503_and_writes_nothing(
    api, tokens, alpha, settings, monkeypatch
):
    """A write that cannot get its vector in EMBEDDING_RESULT_TIMEOUT_S fails fast with 503
    and Retry-After instead of holding the connection forever; nothing half-written."""
    import time

    from apps.vectors import embeddings

    settings.EMBEDDING_RESULT_TIMEOUT_S = 0.3
    monkeypatch.setattr(embeddings.get_model(), "encode_spans", lambda *a, **k: time.sleep(1.5))
    before = Memory.objects.count()
    response = alpha("/memories/", {"content": "A write that meets a stuck encoder."})
    assert response.status_code == 503, response.text
    assert response.headers["Retry-After"] == "5"
    assert "embedding model is busy" in response.json()["detail"]
    assert Memory.objects.count() == before
