"""Per-token request limits and a limit on failed authentications, shared by REST and MCP.

Fixed one-window counters in Django's cache: cheap, and good enough to stop one token (or one
address guessing tokens) from monopolising the server. Rates are settings ("600/minute"), read
at call time so they can be changed per deployment (and per test).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache

PERIODS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}


@dataclass(frozen=True)
class Rate:
    count: int
    seconds: int

    @classmethod
    def parse(cls, text: str) -> Rate:
        count, _, period = text.partition("/")
        period = period.strip().lower().rstrip("s") or "minute"
        return cls(int(count), PERIODS[period])


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    retry_after: int  # seconds until the window resets (0 when allowed)


def hit(scope: str, ident: str, rate: str) -> Verdict:
    """Count one request of `ident` under `scope`; refuse once the window's count is used up."""
    limit = Rate.parse(rate)
    now = time.time()
    window = int(now // limit.seconds)
    key = f"ratelimit:{scope}:{ident}:{window}"
    cache.add(key, 0, timeout=limit.seconds + 1)
    try:
        count = cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout=limit.seconds + 1)
        count = 1
    if count <= limit.count:
        return Verdict(True, 0)
    return Verdict(False, max(1, int((window + 1) * limit.seconds - now) + 1))


def token_request(token_id: int) -> Verdict:
    return hit("token", str(token_id), settings.API_RATE_LIMIT)


def failed_auth(client_address: str) -> Verdict:
    """Count a failed authentication from an address (a wrong or revoked token)."""
    return hit("auth-failure", client_address, settings.AUTH_FAILURE_RATE_LIMIT)


def failures_exceeded(client_address: str) -> Verdict:
    """Whether an address has used up its failed attempts, without counting a new one."""
    limit = Rate.parse(settings.AUTH_FAILURE_RATE_LIMIT)
    now = time.time()
    window = int(now // limit.seconds)
    count = cache.get(f"ratelimit:auth-failure:{client_address}:{window}", 0)
    if count < limit.count:
        return Verdict(True, 0)
    return Verdict(False, max(1, int((window + 1) * limit.seconds - now) + 1))
