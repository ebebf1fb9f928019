"""Every REST endpoint needs a valid token, and a token never sees or changes another
namespace's data."""

from __future__ import annotations

import uuid

import pytest

from apps.access.models import ApiToken
from apps.memories.models import CausalEdge, Memory
from apps.memories.services import edge_create, memory_create

from .live import bearer

ENDPOINTS = [
    ("get", "/memories/"),
    ("post", "/memories/"),
    ("post", "/memories/batch/"),
    ("get", f"/memories/{uuid.uuid4()}/"),
    ("patch", f"/memories/{uuid.uuid4()}/"),
    ("delete", f"/memories/{uuid.uuid4()}/"),
    ("get", "/search/?query=x"),
    ("post", "/search/"),
    ("get", "/edges/"),
    ("post", "/edges/"),
    ("get", "/edges/1/"),
    ("delete", "/edges/1/"),
    ("get", "/tags/"),
    ("get", "/namespaces/"),
    ("get", "/stats/"),
    ("post", "/feedback/"),
]


@pytest.mark.parametrize("header", [None, "Bearer mh_wrong", "Bearer", "Basic dXNlcjpwdw=="])
def test_every_endpoint_refuses_without_a_valid_token(api, tokens, header):
    headers = {"Authorization": header} if header else {}
    for method, path in ENDPOINTS:
        kwargs = {"json": {}} if method in ("post", "patch") else {}
        response = api.request(method, path, headers=headers, **kwargs)
        assert response.status_code == 401, (method, path, response.text)
        assert response.headers["WWW-Authenticate"].startswith("Bearer")
        assert "token" in response.json()["detail"].lower()


def test_revoked_token_is_refused(api, tokens):
    ApiToken.objects.filter(name="a-rw").update(revoked=True)
    response = api.get("/namespaces/", headers=bearer(tokens.alpha_rw))
    assert response.status_code == 401


@pytest.fixture
def beta_data(tokens, embedding_model):
    a = memory_create(namespace=tokens.beta, content="Beta secret: the vault code.").memory
    b = memory_create(namespace=tokens.beta, content="Beta second memory.").memory
    edge = edge_create(source=a, target=b, relation="caused")
    return a, b, edge


def test_token_for_alpha_cannot_read_or_change_beta(api, tokens, beta_data):
    a, b, edge = beta_data
    auth = bearer(tokens.alpha_rw)
    assert api.get("/memories/", headers=auth).json()["count"] == 0
    assert api.get("/memories/", params={"namespace": "beta"}, headers=auth).status_code == 404
    assert api.get(f"/memories/{a.id}/", headers=auth).status_code == 404
    assert api.patch(f"/memories/{a.id}/", json={"title": "x"}, headers=auth).status_code == 404
    assert api.delete(f"/memories/{a.id}/", headers=auth).status_code == 404
    created = api.post("/memories/", json={"content": "x", "namespace": "beta"}, headers=auth)
    assert created.status_code == 404
    batch = api.post(
        "/memories/batch/", json={"namespace": "beta", "items": [{"content": "x"}]}, headers=auth
    )
    assert batch.status_code == 404
    assert api.get("/edges/", headers=auth).json()["count"] == 0
    assert api.get(f"/edges/{edge.pk}/", headers=auth).status_code == 404
    assert api.delete(f"/edges/{edge.pk}/", headers=auth).status_code == 404
    link = api.post(
        "/edges/",
        json={"source": str(a.id), "target": str(b.id), "relation": "caused"},
        headers=auth,
    )
    assert link.status_code == 404
    assert api.get("/tags/", params={"namespace": "beta"}, headers=auth).status_code == 404
    assert [n["name"] for n in api.get("/namespaces/", headers=auth).json()] == ["alpha"]
    stats = api.get("/stats/", headers=auth).json()["namespaces"]
    assert [s["namespace"] for s in stats] == ["alpha"]
    search = api.post("/search/", json={"query": "vault", "namespace": "beta"}, headers=auth)
    assert search.status_code == 404
    assert "vault" not in search.text
    a.refresh_from_db()
    assert a.title == "" and Memory.objects.filter(namespace=tokens.beta).count() == 2
    assert CausalEdge.objects.count() == 1
    assert not Memory.objects.filter(namespace=tokens.alpha).exists()


def test_read_only_token_reads_but_cannot_write(api, tokens, embedding_model):
    memory = memory_create(namespace=tokens.alpha, content="Readable by all alpha tokens.").memory
    auth = bearer(tokens.alpha_ro)
    assert api.get(f"/memories/{memory.id}/", headers=auth).status_code == 200
    refused = [
        api.post("/memories/", json={"content": "new"}, headers=auth),
        api.post("/memories/batch/", json={"items": [{"content": "new"}]}, headers=auth),
        api.patch(f"/memories/{memory.id}/", json={"title": "t"}, headers=auth),
        api.delete(f"/memories/{memory.id}/", headers=auth),
    ]
    for response in refused:
        assert response.status_code == 403, response.text
        assert "read-only" in response.json()["detail"]
    assert api.get("/namespaces/", headers=auth).json()[0]["writable"] is False
    assert Memory.objects.count() == 1


def test_token_with_several_namespaces_must_name_one(api, tokens, embedding_model):
    auth = bearer(tokens.both_rw)
    unnamed = api.post("/memories/", json={"content": "Where do I go?"}, headers=auth)
    assert unnamed.status_code == 400 and "namespace" in unnamed.json()["errors"]
    named = api.post("/memories/", json={"content": "To beta.", "namespace": "beta"}, headers=auth)
    assert named.status_code == 201
    listed = api.get("/memories/", headers=auth).json()
    assert listed["count"] == 1 and listed["results"][0]["namespace"] == "beta"
