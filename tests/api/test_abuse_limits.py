"""Abuse limits: per-token request rate (REST and MCP), failed token checks per address, and
password guessing at the admin login. Hourly windows here, so no window boundary falls inside
a test."""

from __future__ import annotations

import httpx
import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.test import override_settings

from .live import bearer

MCP_HEADERS = {"Accept": "application/json, text/event-stream"}
LIST_TOOLS = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}


@pytest.fixture(autouse=True)
def fresh_counters():
    cache.clear()
    yield
    cache.clear()


@override_settings(API_RATE_LIMIT="5/hour")
def test_a_token_over_its_rate_gets_429_with_retry_after(asgi_server, tokens):
    url = f"{asgi_server}/api/v1/namespaces/"
    statuses = [httpx.get(url, headers=bearer(tokens.alpha_rw)).status_code for _ in range(5)]
    assert statuses == [200] * 5
    refused = httpx.get(url, headers=bearer(tokens.alpha_rw))
    assert refused.status_code == 429
    assert int(refused.headers["Retry-After"]) >= 1
    assert refused.json()["detail"]
    # MCP counts against the same token budget.
    mcp = httpx.post(
        f"{asgi_server}/mcp", json=LIST_TOOLS, headers={**MCP_HEADERS, **bearer(tokens.alpha_rw)}
    )
    assert mcp.status_code == 429
    assert int(mcp.headers["Retry-After"]) >= 1
    # Another token is not affected.
    assert httpx.get(url, headers=bearer(tokens.beta_rw)).status_code == 200


@override_settings(AUTH_FAILURE_RATE_LIMIT="10/hour")
def test_guessing_tokens_meets_429(asgi_server, tokens):
    url = f"{asgi_server}/api/v1/namespaces/"
    statuses = [httpx.get(url, headers=bearer(f"mh_guess{i}")).status_code for i in range(12)]
    assert statuses[:10] == [401] * 10
    assert statuses[10:] == [429, 429]
    mcp = httpx.post(f"{asgi_server}/mcp", json=LIST_TOOLS, headers={**MCP_HEADERS, **bearer("x")})
    assert mcp.status_code == 429


@override_settings(AXES_FAILURE_LIMIT=3)
def test_admin_password_guessing_is_locked_out(client, db):
    get_user_model().objects.create_superuser("boss", "boss@example.com", "right-password-1")
    for _ in range(3):
        client.post("/admin/login/", {"username": "boss", "password": "wrong"})
    locked = client.post("/admin/login/", {"username": "boss", "password": "right-password-1"})
    assert locked.status_code == 429
