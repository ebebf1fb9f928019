"""REST search, feedback, edges, tags, namespaces, stats, the OpenAPI schema and docs page."""

from __future__ import annotations

import pytest

from apps.memories.models import CausalEdge
from apps.memories.services import memory_create
from apps.search.models import QueryLog

from .live import bearer


@pytest.fixture
def stored(tokens, embedding_model, settings):
    settings.SEARCH_QUERYLOG_SYNC = True
    items = [
        ("Celery workers read tasks from Redis.", ["celery", "redis"], "fact"),
        ("Avoid long transactions during imports: they block vacuum.", ["postgres"], "warning"),
        ("We picked HNSW over IVFFlat for recall at small scale.", ["postgres"], "decision"),
    ]
    return [
        memory_create(namespace=tokens.alpha, content=c, tags=t, category=cat).memory
        for c, t, cat in items
    ]


def test_search_by_body_and_query_string(api, tokens, stored):
    auth = bearer(tokens.alpha_rw)
    posted = api.post(
        "/search/", json={"query": "which index type did we choose?", "limit": 2}, headers=auth
    )
    assert posted.status_code == 200, posted.text
    body = posted.json()
    assert body["memories"][0]["id"] == str(stored[2].id)
    assert body["total"] <= 2 and body["mode"] == "hybrid"
    assert "HNSW" in body["text"]
    assert 0.0 <= body["confidence"] <= 1.0
    got = api.get(
        "/search/", params={"query": "vacuum", "tags": "postgres", "mode": "exact"}, headers=auth
    )
    assert got.status_code == 200, got.text
    assert [m["id"] for m in got.json()["memories"]] == [str(stored[1].id)]
    filtered = api.post(
        "/search/",
        json={"query": "postgres", "categories": ["decision"], "include_debug": True},
        headers=auth,
    ).json()
    assert {m["category"] for m in filtered["memories"]} == {"decision"}
    assert filtered["debug"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"query": "x", "limit": 101}, "limit"),
        ({"query": "x", "limit": 0}, "limit"),
        ({"query": "x" * 2001}, "query"),
        ({"query": "x", "mode": "fuzzy"}, "mode"),
        ({"query": "x", "quality_boost": 2}, "quality_boost"),
        ({"query": "x", "after": "not a date"}, "after"),
        ({"limit": 5}, "query"),
    ],
)
def test_search_limits_name_the_field(api, tokens, body, field):
    response = api.post("/search/", json=body, headers=bearer(tokens.alpha_rw))
    assert response.status_code == 400
    assert field in response.json()["errors"]


def test_feedback_on_a_search(api, tokens, stored):
    auth = bearer(tokens.alpha_rw)
    search = api.post("/search/", json={"query": "celery broker"}, headers=auth).json()
    log_id, top = search["query_log_id"], search["memories"][0]["id"]
    response = api.post(
        "/feedback/",
        json={"query_log_id": log_id, "was_useful": True, "result_feedback": {top: True}},
        headers=auth,
    )
    assert response.status_code == 200, response.text
    assert response.json() == {
        "query_log_id": log_id,
        "was_useful": True,
        "result_feedback": {top: True},
    }
    assert QueryLog.objects.get(pk=log_id).was_useful is True
    empty = api.post("/feedback/", json={"query_log_id": log_id}, headers=auth)
    assert empty.status_code == 400 and "was_useful" in empty.json()["errors"]
    foreign = api.post(
        "/feedback/",
        json={"query_log_id": log_id, "was_useful": False},
        headers=bearer(tokens.beta_rw),
    )
    assert foreign.status_code == 404
    read_only = api.post(
        "/feedback/",
        json={"query_log_id": log_id, "was_useful": False},
        headers=bearer(tokens.alpha_ro),
    )
    assert read_only.status_code == 403
    assert QueryLog.objects.get(pk=log_id).was_useful is True


def test_edges_create_list_read_delete(api, tokens, stored):
    auth = bearer(tokens.alpha_rw)
    a, b, c = (str(m.id) for m in stored)
    created = api.post(
        "/edges/",
        json={"source": a, "target": b, "relation": "caused", "strength": 0.5},
        headers=auth,
    )
    assert created.status_code == 201, created.text
    edge = created.json()
    assert (edge["source"], edge["target"], edge["relation"]) == (a, b, "caused")
    api.post("/edges/", json={"source": c, "target": b, "relation": "supersedes"}, headers=auth)
    self_link = api.post(
        "/edges/", json={"source": a, "target": a, "relation": "caused"}, headers=auth
    )
    assert self_link.status_code == 400 and "target" in self_link.json()["errors"]
    bad = api.post("/edges/", json={"source": a, "target": b, "relation": "likes"}, headers=auth)
    assert bad.status_code == 400 and "relation" in bad.json()["errors"]

    assert api.get("/edges/", headers=auth).json()["count"] == 2
    touching_a = api.get("/edges/", params={"memory": a}, headers=auth).json()
    assert [e["id"] for e in touching_a["results"]] == [edge["id"]]
    by_relation = api.get("/edges/", params={"relation": "supersedes"}, headers=auth).json()
    assert [e["source"] for e in by_relation["results"]] == [c]
    assert api.get(f"/edges/{edge['id']}/", headers=auth).json()["strength"] == 0.5
    assert api.delete(f"/edges/{edge['id']}/", headers=auth).status_code == 204
    assert not CausalEdge.objects.filter(pk=edge["id"]).exists()


def test_tags_namespaces_and_stats(api, tokens, stored):
    memory_create(namespace=tokens.beta, content="Beta knows about kafka.", tags=["kafka"])
    auth = bearer(tokens.alpha_rw)
    tags = api.get("/tags/", headers=auth).json()["results"]
    assert {t["name"]: t["count"] for t in tags}["postgres"] == 2
    assert "kafka" not in {t["name"] for t in tags}

    namespaces = api.get("/namespaces/", headers=auth).json()
    assert namespaces == [{"name": "alpha", "description": "", "memory_count": 3, "writable": True}]
    both = api.get("/namespaces/", headers=bearer(tokens.both_rw)).json()
    assert [n["name"] for n in both] == ["alpha", "beta"]

    api.post("/search/", json={"query": "redis"}, headers=auth)
    stats = api.get("/stats/", headers=auth).json()["namespaces"]
    assert stats[0]["namespace"] == "alpha"
    assert stats[0]["memories"] == 3 and stats[0]["searches"] == 1
    assert stats[0]["tags"] == len(tags)  # given and inferred tags of active memories


def test_schema_and_docs_pages(api, asgi_server, tokens):
    schema = api.get("/schema/", params={"format": "json"})
    assert schema.status_code == 200
    spec = schema.json()
    assert spec["openapi"].startswith("3.")
    paths = set(spec["paths"])
    for path in ("memories/", "memories/batch/", "memories/{id}/", "search/", "edges/", "tags/",
                 "namespaces/", "stats/", "feedback/"):  # fmt: skip
        assert f"/api/v1/{path}" in paths
    assert spec["components"]["securitySchemes"]["ApiToken"]["scheme"] == "bearer"
    docs = api.get(f"{asgi_server}/api/docs/")
    assert docs.status_code == 200 and "swagger" in docs.text.lower()
