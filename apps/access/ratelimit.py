"""Per-token request limits and a limit on failed authentications, shared by REST and MCP.

Fixed one-window counters in the database (RateCounter): one atomic upsert per request, so every
web process counts against the same number (a per-process cache let a token make twice its rate
with two processes). Rates are settings ("600/minute"), read at call time so they can be changed
per deployment (and per test).

Failed token checks are counted per client address, but only a *failed* check is ever refused
for it: a valid token is authenticated first and never meets that counter, so someone guessing
tokens from an address (or behind the same proxy) cannot lock out the honest clients there.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from datetime import UTC, datetime

from django.conf import settings
from django.db import connection

from .models import RateCounter

PERIODS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}
# About one counted request in this many sweeps the rows of windows that are over.
SWEEP_EVERY = 500


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


def _window(limit: Rate, now: float) -> tuple[int, int]:
    """(window number, seconds until it ends, at least 1)."""
    window = int(now // limit.seconds)
    return window, max(1, int((window + 1) * limit.seconds - now) + 1)


def hit(scope: str, ident: str, rate: str) -> Verdict:
    """Count one request of `ident` under `scope`; refuse once the window's count is used up."""
    limit = Rate.parse(rate)
    now = time.time()
    window, left = _window(limit, now)
    key = f"{scope}:{ident}:{window}"[:200]
    expires = datetime.fromtimestamp((window + 1) * limit.seconds, tz=UTC)
    table = RateCounter._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (key, count, expires_at) VALUES (%s, 1, %s) "
            f"ON CONFLICT (key) DO UPDATE SET count = {table}.count + 1 RETURNING count",
            [key, expires],
        )
        count = cursor.fetchone()[0]
    if random.random() < 1 / SWEEP_EVERY:
        RateCounter.objects.filter(expires_at__lt=datetime.fromtimestamp(now, tz=UTC)).delete()
    return Verdict(True, 0) if count <= limit.count else Verdict(False, left)


def token_request(token_id: int) -> Verdict:
    return hit("token", str(token_id), settings.API_RATE_LIMIT)


def failed_auth(client_address: str) -> Verdict:
    """Count a failed authentication from an address (a wrong or revoked token); refused once
    the address has used up its failed attempts (the caller answers 429 instead of 401)."""
    return hit("auth-failure", client_address, settings.AUTH_FAILURE_RATE_LIMIT)


def failures_exceeded(client_address: str) -> Verdict:
    """Whether an address has used up its failed attempts, without counting a new one."""
    limit = Rate.parse(settings.AUTH_FAILURE_RATE_LIMIT)
    window, left = _window(limit, time.time())
    found = RateCounter.objects.filter(key=f"auth-failure:{client_address}:{window}"[:200])
    count = found.values_list("count", flat=True).first() or 0
    return Verdict(True, 0) if count < limit.count else Verdict(False, left)
