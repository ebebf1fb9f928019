"""Per-token request limits and a limit on failed authentications, shared by REST and MCP.

Fixed one-window counters that every web process shares (a per-process count let a token make
twice its rate with two processes). Where they are kept:

- In the deployment's shared cache (RATE_LIMIT_CACHE_URL, Redis in the production shape): one
  `add` of the window's key, else one atomic `incr`; the key expires with its window, so the
  store holds only the windows that are running. Nothing is written to the database, so a
  replica serves reads alone while the primary is down.
- Otherwise (the embedded default, one database) in the database (RateCounter): one atomic
  upsert per request. Rows of windows that are over are deleted by the scheduled table cleanup
  (apps/access/cleanup.py), not here.

If the store cannot be reached the request is let through and a warning logged: a limiter that
refused everyone while Redis (or the primary) is away would turn an outage of the bookkeeping
into an outage of the service. After a failure the store is left alone for STORE_RETRY_SECONDS.

Rates are settings ("600/minute"), read at call time so they can be changed per deployment (and
per test). Failed token checks are counted per client address, but only a *failed* check is ever
refused for it: a valid token is authenticated first and never meets that counter, so someone
guessing tokens from an address (or behind the same proxy) cannot lock out the honest clients
there.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime

from django.conf import settings
from django.core.cache import caches
from django.db import InterfaceError, OperationalError, connection

from .models import RateCounter

logger = logging.getLogger(__name__)

PERIODS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}
CACHE_ALIAS = "ratelimit"
# A store that failed is not asked again for this long (every request meanwhile is let through),
# so a Redis that hangs costs one request a socket timeout, not every request.
STORE_RETRY_SECONDS = 1.0
# A window's cache key lives this long past the window's end, so it can never expire between
# the `add` and the `incr` of a request inside the window (an `incr` would then recreate it
# without an expiry).
KEY_GRACE_SECONDS = 5

_down_until = 0.0
_down_lock = threading.Lock()


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


def uses_cache() -> bool:
    """True when the deployment configured a shared cache for the counters."""
    return CACHE_ALIAS in settings.CACHES


def hit(scope: str, ident: str, rate: str) -> Verdict:
    """Count one request of `ident` under `scope`; refuse once the window's count is used up.
    Lets the request through (and logs) when the counters cannot be reached."""
    limit = Rate.parse(rate)
    now = time.time()
    window, left = _window(limit, now)
    key = _key(scope, ident, window)
    if not _store_up(now):
        return Verdict(True, 0)
    try:
        if uses_cache():
            count = _cache_count(key, timeout=left + KEY_GRACE_SECONDS)
        else:
            count = _database_count(key, expires=(window + 1) * limit.seconds)
    except _unreachable_errors() as exc:
        _store_failed(exc, now)
        return Verdict(True, 0)
    return Verdict(True, 0) if count <= limit.count else Verdict(False, left)


def _key(scope: str, ident: str, window: int) -> str:
    return f"{scope}:{ident}:{window}"[:200]


def _cache_count(key: str, *, timeout: int) -> int:
    cache = caches[CACHE_ALIAS]
    if cache.add(key, 1, timeout=timeout):
        return 1
    try:
        return cache.incr(key)
    except ValueError:  # evicted between the two calls (a full cache): count afresh
        cache.add(key, 1, timeout=timeout)
        return 1


def _database_count(key: str, *, expires: int) -> int:
    table = RateCounter._meta.db_table
    # Outside a transaction the count commits on its own, without waiting for its WAL record to
    # reach the disk: a crash may forget the last few counts, and a request no longer waits for
    # a disk flush while holding its token's row (every request of one token queued on it).
    # Inside one (a caller's writes) the transaction's own durability is left as it is.
    rows = "VALUES (%s, 1, %s)"
    if not connection.in_atomic_block:
        rows = "SELECT %s, 1, %s FROM (SELECT set_config('synchronous_commit', 'off', true)) s"
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (key, count, expires_at) {rows} "
            f"ON CONFLICT (key) DO UPDATE SET count = {table}.count + 1 RETURNING count",
            [key, datetime.fromtimestamp(expires, tz=UTC)],
        )
        return cursor.fetchone()[0]


def _unreachable_errors() -> tuple[type[Exception], ...]:
    """What "the store cannot be reached" raises: cache backends have no common error class
    (redis-py, pymemcache...), so any error of the cache; of the database only a lost server."""
    return (Exception,) if uses_cache() else (OperationalError, InterfaceError)


def _store_up(now: float) -> bool:
    return now >= _down_until


def _store_failed(exc: Exception, now: float) -> None:
    """Leave the store alone for a moment and say so once (not once per request)."""
    global _down_until
    with _down_lock:
        first = now >= _down_until + 60  # not failing for a minute: a new outage
        _down_until = now + STORE_RETRY_SECONDS
    if first:
        logger.warning("rate limit store unavailable, requests are let through uncounted: %s", exc)


def token_request(token_id: int) -> Verdict:
    return hit("token", str(token_id), settings.API_RATE_LIMIT)


def failed_auth(client_address: str) -> Verdict:
    """Count a failed authentication from an address (a wrong or revoked token); refused once
    the address has used up its failed attempts (the caller answers 429 instead of 401)."""
    return hit("auth-failure", client_address, settings.AUTH_FAILURE_RATE_LIMIT)


def failures_exceeded(client_address: str) -> Verdict:
    """Whether an address has used up its failed attempts, without counting a new one."""
    limit = Rate.parse(settings.AUTH_FAILURE_RATE_LIMIT)
    now = time.time()
    window, left = _window(limit, now)
    key = _key("auth-failure", client_address, window)
    if not _store_up(now):
        return Verdict(True, 0)
    try:
        if uses_cache():
            count = caches[CACHE_ALIAS].get(key) or 0
        else:
            found = RateCounter.objects.filter(key=key)
            count = found.values_list("count", flat=True).first() or 0
    except _unreachable_errors() as exc:
        _store_failed(exc, now)
        return Verdict(True, 0)
    return Verdict(True, 0) if count < limit.count else Verdict(False, left)
