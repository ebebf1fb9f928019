"""HTTP-level edges: body limits on the bytes read, chunked bodies, JSON errors, optional
trailing slashes, and what MCP clients meet when the token is wrong."""

from __future__ import annotations

import json

import httpx
import pytest
from django.conf import settings
from django.test import RequestFactory

from apps.core.error_pages import server_error
from apps.memories.models import Memory

from .live import bearer


def _chunks(data: bytes, size: int = 64 * 1024):
    for start in range(0, len(data), size):
        yield data[start : start + size]


@pytest.mark.parametrize("path", ["/api/v1/memories/", "/mcp"])
def test_an_oversized_chunked_body_is_refused_with_413_json(asgi_server, tokens, path):
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    payload = json.dumps({"content": "x" * (limit + 10)}).encode()
    response = httpx.post(
        f"{asgi_server}{path}",
        content=_chunks(payload),
        headers={**bearer(tokens.alpha_rw), "Content-Type": "application/json"},
        timeout=60,
    )
    assert response.status_code == 413
    assert "limit" in response.json()["detail"]
    assert not Memory.objects.exists()


def test_a_chunked_patch_is_read(asgi_server, tokens):
    auth = {**bearer(tokens.alpha_rw), "Content-Type": "application/json"}
    created = httpx.post(
        f"{asgi_server}/api/v1/memories/", json={"content": "before"}, headers=auth
    ).json()
    memory_id = created["memory"]["id"]
    body = json.dumps({"title": "changed by a chunked PATCH"}).encode()
    response = httpx.patch(
        f"{asgi_server}/api/v1/memories/{memory_id}/", content=_chunks(body, 8), headers=auth
    )
    assert response.status_code == 200
    assert Memory.objects.get(pk=memory_id).title == "changed by a chunked PATCH"


def test_the_trailing_slash_is_optional(asgi_server, tokens):
    response = httpx.post(
        f"{asgi_server}/api/v1/memories",
        json={"content": "no slash"},
        headers=bearer(tokens.alpha_rw),
    )
    assert response.status_code == 201
    memory_id = response.json()["memory"]["id"]
    read = httpx.get(f"{asgi_server}/api/v1/memories/{memory_id}", headers=bearer(tokens.alpha_rw))
    assert read.status_code == 200


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/api/v1/nothing-here", 404),
        ("GET", "/api/v1/nothing/here/", 404),
        ("PUT", "/api/v1/search/", 405),
        ("DELETE", "/api/v1/memories/", 405),
    ],
)
def test_api_errors_are_json(asgi_server, tokens, method, path, status):
    response = httpx.request(method, f"{asgi_server}{path}", headers=bearer(tokens.alpha_rw))
    assert response.status_code == status
    assert response.headers["content-type"].startswith("application/json")
    assert response.json()["detail"]


def test_an_unexpected_api_error_answers_json():
    response = server_error(RequestFactory().get("/api/v1/memories/"))
    assert response.status_code == 500
    assert json.loads(response.content)["detail"]


@pytest.mark.parametrize("header", [None, "Bearer mh_wrong"])
def test_mcp_401_carries_a_bearer_challenge_with_the_reason(asgi_server, tokens, header):
    headers = {"Accept": "application/json, text/event-stream"}
    if header:
        headers["Authorization"] = header
    response = httpx.post(f"{asgi_server}/mcp", json={"jsonrpc": "2.0"}, headers=headers)
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert "create_token" in challenge
    assert ("invalid_token" in challenge) == bool(header)


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/.well-known/oauth-protected-resource", 200),
        ("/.well-known/oauth-protected-resource/mcp", 200),
        ("/.well-known/oauth-authorization-server", 200),
        ("/.well-known/oauth-authorization-server/mcp", 404),
        ("/.well-known/openid-configuration", 404),
        ("/oauth/register", 400),
    ],
)
def test_oauth_discovery_answers_json(asgi_server, transactional_db, path, status):
    """MCP clients probe these after a 401; each answers JSON (never Django's HTML 404 page),
    the metadata documents pointing at this server's OAuth endpoints (docs/oauth.md)."""
    method = "POST" if path == "/oauth/register" else "GET"
    response = httpx.request(method, f"{asgi_server}{path}", json={} if method == "POST" else None)
    assert response.status_code == status
    body = response.json()
    if path.startswith("/.well-known/oauth-protected-resource"):
        assert body["bearer_methods_supported"] == ["header"]
        assert body["authorization_servers"] == [asgi_server]
    elif status == 200:
        assert body["registration_endpoint"] == f"{asgi_server}/oauth/register"
    else:
        assert body["error_description"]


def test_a_returned_query_log_id_has_its_row_already(asgi_server, tokens):
    from apps.search.models import QueryLog

    response = httpx.post(
        f"{asgi_server}/api/v1/search/",
        json={"query": "anything at all"},
        headers=bearer(tokens.alpha_rw),
    )
    assert response.status_code == 200
    assert QueryLog.objects.filter(pk=response.json()["query_log_id"]).exists()
