"""Rate limits counted in the deployment's shared cache (RATE_LIMIT_CACHE_URL: Redis in the
production shape) instead of a database row per request, and what happens when that store
cannot be reached: requests go through, a warning says so. A real Redis on 127.0.0.1:6379,
database 11 (emptied before and after); "unreachable" is a port nobody listens on."""

from __future__ import annotations

import logging

import httpx
import pytest
import redis
from django.conf import settings
from django.test import override_settings

from apps.access import ratelimit
from apps.access.models import ApiToken, RateCounter

from .live import bearer
from .other_process import spend_in_another_process

REDIS_URL = "redis://127.0.0.1:6379/11"
CLOSED_PORT_URL = "redis://127.0.0.1:1/11"


def _caches(url: str) -> dict:
    timeouts = {"socket_connect_timeout": 0.5, "socket_timeout": 0.5}
    store = {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": url,
        "KEY_PREFIX": "ratelimit",
        "OPTIONS": timeouts,
    }
    return {**settings.CACHES, "ratelimit": store}


@pytest.fixture
def shared_redis():
    client = redis.Redis.from_url(REDIS_URL)
    client.flushdb()
    yield client
    client.flushdb()


@pytest.fixture(autouse=True)
def store_state(monkeypatch):
    """Each test starts with the store not marked as failing (a module-level mark)."""
    monkeypatch.setattr(ratelimit, "_down_until", 0.0)


@override_settings(CACHES=_caches(REDIS_URL), API_RATE_LIMIT="5/hour")
def test_a_token_over_its_rate_is_refused_from_the_shared_cache(asgi_server, tokens, shared_redis):
    url = f"{asgi_server}/api/v1/namespaces/"
    statuses = [httpx.get(url, headers=bearer(tokens.alpha_rw)).status_code for _ in range(6)]
    assert statuses == [200] * 5 + [429]
    assert httpx.get(url, headers=bearer(tokens.beta_rw)).status_code == 200
    # Counted in Redis, with an expiry at the window's end; not one row on the database.
    assert RateCounter.objects.count() == 0
    keys = shared_redis.keys("ratelimit:*token:*")
    assert len(keys) == 2
    assert all(0 < shared_redis.ttl(key) <= 3600 + ratelimit.KEY_GRACE_SECONDS for key in keys)


@override_settings(CACHES=_caches(REDIS_URL), AUTH_FAILURE_RATE_LIMIT="10/hour")
def test_guessed_tokens_meet_429_and_a_valid_token_still_passes(asgi_server, tokens, shared_redis):
    url = f"{asgi_server}/api/v1/namespaces/"
    guesses = [httpx.get(url, headers=bearer(f"mh_guess{i}")).status_code for i in range(12)]
    assert guesses == [401] * 10 + [429, 429]
    # The valid token never meets the failure counter of its address.
    assert httpx.get(url, headers=bearer(tokens.alpha_rw)).status_code == 200
    assert RateCounter.objects.count() == 0


@override_settings(API_RATE_LIMIT="5/hour")
def test_every_process_counts_against_the_same_cache(asgi_server, tokens, shared_redis):
    token = ApiToken.objects.get(name="a-rw")
    spend_in_another_process(token.pk, 3, RATE_LIMIT_CACHE_URL=REDIS_URL, API_RATE_LIMIT="5/hour")
    url = f"{asgi_server}/api/v1/namespaces/"
    with override_settings(CACHES=_caches(REDIS_URL)):
        statuses = [httpx.get(url, headers=bearer(tokens.alpha_rw)).status_code for _ in range(3)]
    assert statuses == [200, 200, 429]


@override_settings(
    CACHES=_caches(CLOSED_PORT_URL), API_RATE_LIMIT="2/hour", AUTH_FAILURE_RATE_LIMIT="2/hour"
)
def test_an_unreachable_store_lets_requests_through_and_says_so(asgi_server, tokens, caplog):
    url = f"{asgi_server}/api/v1/namespaces/"
    with caplog.at_level(logging.WARNING, logger="apps.access.ratelimit"):
        statuses = [httpx.get(url, headers=bearer(tokens.alpha_rw)).status_code for _ in range(5)]
        guesses = [httpx.get(url, headers=bearer(f"mh_guess{i}")).status_code for i in range(5)]
    # Over both limits, yet nobody is refused (and nothing answers 5xx): counting is off.
    assert statuses == [200] * 5
    assert guesses == [401] * 5
    assert RateCounter.objects.count() == 0
    warnings = [r for r in caplog.records if r.name == "apps.access.ratelimit"]
    assert warnings and "rate limit store unavailable" in warnings[0].getMessage()
    # Once per outage, not once per request.
    assert len(warnings) == 1
