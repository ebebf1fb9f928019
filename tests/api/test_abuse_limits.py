"""Abuse limits: per-token request rate (REST and MCP), failed token checks per address, and
password guessing at the admin login. Hourly windows here, so no window boundary falls inside
a test."""

from __future__ import annotations

import httpx
import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import override_settings

from apps.access.models import ApiToken, RateCounter

from .live import bearer
from .other_process import spend_in_another_process

MCP_HEADERS = {"Accept": "application/json, text/event-stream"}
LIST_TOOLS = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}


@pytest.fixture(autouse=True)
def fresh_counters(db):
    RateCounter.objects.all().delete()
    yield
    RateCounter.objects.all().delete()


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


@override_settings(AUTH_FAILURE_RATE_LIMIT="10/hour")
def test_guessed_tokens_never_lock_out_a_valid_token_from_the_same_address(asgi_server, tokens):
    url = f"{asgi_server}/api/v1/namespaces/"
    with httpx.Client() as client:
        guesses = [
            client.get(url, headers=bearer(f"mh_made_up_{i}")).status_code for i in range(60)
        ]
        assert guesses.count(429) == 50  # the guesser is slowed down ...
        # ... while the real token from that very address still answers, on REST and MCP.
        assert client.get(url, headers=bearer(tokens.alpha_rw)).status_code == 200
        mcp = client.post(
            f"{asgi_server}/mcp",
            json=LIST_TOOLS,
            headers={**MCP_HEADERS, **bearer(tokens.alpha_rw)},
        )
        assert mcp.status_code == 200


@override_settings(AUTH_FAILURE_RATE_LIMIT="3/hour")
def test_a_forged_forwarded_for_changes_nothing_without_a_trusted_proxy(asgi_server, tokens):
    assert settings.TRUSTED_PROXIES == []
    url = f"{asgi_server}/api/v1/namespaces/"
    statuses = [
        httpx.get(
            url, headers={**bearer("mh_wrong"), "X-Forwarded-For": f"203.0.113.{i}"}
        ).status_code
        for i in range(5)
    ]
    # Every guess counts against the connecting address, whatever the header claims.
    assert statuses == [401, 401, 401, 429, 429]


@override_settings(API_RATE_LIMIT="5/hour")
def test_a_token_limit_counts_requests_of_every_process_together(asgi_server, tokens):
    token = ApiToken.objects.get(name="a-rw")
    # Another process (its own interpreter and database connection) spends 3 of the 5.
    spend_in_another_process(token.pk, 3, API_RATE_LIMIT="5/hour")
    url = f"{asgi_server}/api/v1/namespaces/"
    statuses = [httpx.get(url, headers=bearer(tokens.alpha_rw)).status_code for _ in range(3)]
    assert statuses == [200, 200, 429]


@override_settings(AXES_FAILURE_LIMIT=3)
def test_a_lockout_holds_one_address_and_username_pair_and_the_owner_can_lift_it(client, db):
    get_user_model().objects.create_superuser("boss", "boss@example.com", "right-password-1")
    attacker, owner = {"REMOTE_ADDR": "198.51.100.7"}, {"REMOTE_ADDR": "192.0.2.10"}
    for _ in range(5):
        client.post("/admin/login/", {"username": "boss", "password": "wrong"}, **attacker)
    right = {"username": "boss", "password": "right-password-1"}
    assert client.post("/admin/login/", right, **attacker).status_code == 429
    # The owner, from their own address, is not locked out by the attacker's guesses.
    assert client.post("/login/", right, **owner).status_code == 302
    client.logout()
    # Locked out on the shared address too? The documented command lets the owner in again.
    call_command("axes_reset_username", "boss")
    assert client.post("/admin/login/", right, **attacker).status_code == 302
