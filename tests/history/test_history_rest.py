"""Revisions and the trash over real HTTP: recorded with the token and the "rest" door,
scoped to the token's namespaces (another namespace's memory answers 404)."""

from __future__ import annotations

import pytest

from apps.history.models import TrashEntry
from apps.memories.models import CausalEdge

from ..api.live import bearer

pytestmark = pytest.mark.usefixtures("embedding_model")


def _store(api, token, content, **fields):
    response = api.post("/memories/", json={"content": content, **fields}, headers=bearer(token))
    assert response.status_code == 201, response.text
    return response.json()["memory"]["id"]


def test_changes_through_rest_are_listed_with_token_door_and_fields(api, tokens):
    memory_id = _store(api, tokens.alpha_rw, "Release train leaves on Tuesdays", tier="normal")
    patched = api.patch(
        f"/memories/{memory_id}/",
        json={"content": "Release train leaves on Wednesdays", "tier": "core"},
        headers=bearer(tokens.alpha_rw),
    )
    assert patched.status_code == 200

    page = api.get(f"/memories/{memory_id}/revisions/", headers=bearer(tokens.alpha_ro))
    assert page.status_code == 200
    body = page.json()
    assert body["count"] == 2
    update, create = body["results"]
    assert (update["action"], update["door"], update["actor_type"]) == ("update", "rest", "token")
    assert update["actor"].startswith("token a-rw")
    assert update["before"] == {"content": "Release train leaves on Tuesdays", "tier": "normal"}
    assert update["after"] == {"content": "Release train leaves on Wednesdays", "tier": "core"}
    assert create["action"] == "create" and create["before"] is None

    one = api.get(
        f"/memories/{memory_id}/revisions/", params={"limit": 1}, headers=bearer(tokens.alpha_rw)
    ).json()
    assert len(one["results"]) == 1 and one["next"]


def test_revisions_of_another_namespace_answer_404(api, tokens):
    memory_id = _store(api, tokens.alpha_rw, "Alpha's private runbook")
    for path in (f"/memories/{memory_id}/revisions/", "/trash/?namespace=alpha"):
        response = api.get(path, headers=bearer(tokens.beta_rw))
        assert response.status_code == 404, path
        assert "runbook" not in response.text
    restore = api.post(
        f"/memories/{memory_id}/revisions/1/restore/", headers=bearer(tokens.beta_rw)
    )
    assert restore.status_code == 404


def test_restore_an_old_version_over_rest(api, tokens):
    memory_id = _store(api, tokens.alpha_rw, "Backups are kept 7 days")
    api.patch(
        f"/memories/{memory_id}/",
        json={"content": "Backups are kept 30 days"},
        headers=bearer(tokens.alpha_rw),
    )
    revisions = api.get(f"/memories/{memory_id}/revisions/", headers=bearer(tokens.alpha_rw))
    first = revisions.json()["results"][-1]["id"]

    refused = api.post(
        f"/memories/{memory_id}/revisions/{first}/restore/", headers=bearer(tokens.alpha_ro)
    )
    assert refused.status_code == 403
    restored = api.post(
        f"/memories/{memory_id}/revisions/{first}/restore/", headers=bearer(tokens.alpha_rw)
    )
    assert restored.status_code == 200 and restored.json()["content"] == "Backups are kept 7 days"

    newest = api.get(f"/memories/{memory_id}/revisions/", headers=bearer(tokens.alpha_rw))
    top = newest.json()["results"][0]
    assert (top["action"], top["door"]) == ("restore", "rest")
    assert top["after"] == {"content": "Backups are kept 7 days"}
    found = api.post(
        "/search/", json={"query": "how long are backups kept"}, headers=bearer(tokens.alpha_rw)
    )
    assert found.json()["memories"][0]["content"] == "Backups are kept 7 days"


def test_delete_then_restore_from_the_trash_keeps_id_and_edges(api, tokens):
    a = _store(api, tokens.alpha_rw, "Nightly import takes a lock")
    b = _store(api, tokens.alpha_rw, "Imports retry when the lock is busy")
    linked = api.post(
        "/edges/",
        json={"source": b, "target": a, "relation": "depends_on"},
        headers=bearer(tokens.alpha_rw),
    )
    assert linked.status_code == 201
    assert api.delete(f"/memories/{a}/", headers=bearer(tokens.alpha_rw)).status_code == 204
    assert api.get(f"/memories/{a}/", headers=bearer(tokens.alpha_rw)).status_code == 404

    trash = api.get("/trash/", params={"namespace": "alpha"}, headers=bearer(tokens.alpha_rw))
    [entry] = trash.json()["results"]
    assert entry["memory_id"] == a and entry["edge_count"] == 1 and entry["door"] == "rest"
    assert api.get("/trash/", headers=bearer(tokens.beta_rw)).json()["count"] == 0

    assert (
        api.post(f"/trash/{entry['id']}/restore/", headers=bearer(tokens.beta_rw)).status_code
        == 404
    )
    assert (
        api.post(f"/trash/{entry['id']}/restore/", headers=bearer(tokens.alpha_ro)).status_code
        == 403
    )
    restored = api.post(f"/trash/{entry['id']}/restore/", headers=bearer(tokens.alpha_rw))
    assert restored.status_code == 200, restored.text
    body = restored.json()
    assert body["memory"]["id"] == a and body["edges_restored"] == 1
    assert CausalEdge.objects.filter(source_id=b, target_id=a, relation="depends_on").exists()
    assert not TrashEntry.objects.exists()
    history = api.get(f"/memories/{a}/revisions/", headers=bearer(tokens.alpha_rw)).json()
    assert [r["action"] for r in history["results"]] == ["undelete", "delete", "link", "create"]
