"""Reads on a streaming replica, writes on the primary (DATABASE_REPLICA_URL).

With no replica configured none of this is installed and every query goes to "default".

With one, `DATABASE_ROUTERS` holds `PrimaryReplicaRouter` and the `replica` alias exists:

- Reads go to the replica only inside an HTTP request (`RoutingScope`, an ASGI middleware, marks
  it; REST, UI and MCP alike). Management commands, Celery jobs and migrations read and write the
  primary, so a job never reads something older than what it is about to write.
- Read-your-writes: the first write of a request pins its client (API token or browser session)
  to the primary for REPLICA_PIN_SECONDS, recorded in the `routing` cache that all web processes
  share, so the client's next requests, whichever process answers them, read the primary. A
  request also reads the primary after its own first write and inside any transaction on the
  primary. Bookkeeping writes (the search log, a missed search's query vector, a token's last
  use) do not pin.
- Faults: a server that fails is marked down in this process for a second (after a probe
  confirms it does not answer), and reads go to the other one: replica down -> the primary
  serves reads; primary down -> the replica serves reads and writes fail fast (503 with
  Retry-After) instead of waiting out the pool's timeout. A request whose read failed in flight
  (before it wrote anything) runs again on the other server (`ReplicaRetryMiddleware`, and the
  MCP runtime).

Raw SQL reads (the search pipeline's candidate queries) use `read_connection`, which follows
the same choice as the router's `db_for_read`.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from contextvars import ContextVar
from dataclasses import dataclass, field

import psycopg
from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.cache import caches
from django.core.exceptions import RequestDataTooBig
from django.db import connections

logger = logging.getLogger(__name__)

PRIMARY = "default"
REPLICA = "replica"
# Models whose writes are bookkeeping, not data a client reads back: they never pin.
# The missed-query vector is written by a search that found nothing good: pinned, such a reader
# read the primary for the next REPLICA_PIN_SECONDS and its searches failed when it stopped.
UNPINNED_MODELS = {
    "search.querylog",
    "search.missedqueryvector",
    "access.apitoken",
    "axes.accessattempt",
    "axes.accesslog",
}


ROUTER = "memoryhub.db_router.PrimaryReplicaRouter"


def replica_configured() -> bool:
    return ROUTER in settings.DATABASE_ROUTERS and REPLICA in connections.settings


# --- Per-request state ----------------------------------------------------------------------


@dataclass
class RequestRouting:
    """One HTTP request's routing state; a mutable object so that every thread the request runs
    in (Django's sync views, MCP tool threads) sees the same one."""

    client: str = ""  # a hash of the API token or session cookie ("" when anonymous)
    pinned: bool | None = None  # None: not looked up yet
    wrote: bool = False
    failed_alias: str | None = None  # a read on this alias failed during the request
    avoid: set[str] = field(default_factory=set)  # aliases this request must not read from


_state: ContextVar[RequestRouting | None] = ContextVar("request_routing", default=None)


def current() -> RequestRouting | None:
    return _state.get()


def _hashed(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()[:32] if raw else ""


def client_key(headers: list[tuple[bytes, bytes]]) -> str:
    """Who is asking: the bearer token, else the session cookie; hashed (never stored raw)."""
    auth = cookie = b""
    for name, value in headers:
        if name == b"authorization":
            auth = value
        elif name == b"cookie":
            cookie = value
    if auth and auth.split():
        return _hashed(b"t:" + auth.split()[-1])
    session_name = settings.SESSION_COOKIE_NAME.encode()
    for part in cookie.split(b";"):
        name, _, value = part.strip().partition(b"=")
        if name == session_name and value:
            return _hashed(b"s:" + value)
    return ""


def new_session_key(headers: list[tuple[bytes, bytes]]) -> str:
    """The client key of a session cookie the response sets (a login starts a new session, so
    the pin must follow the new cookie, not the one the request came with)."""
    prefix = settings.SESSION_COOKIE_NAME.encode() + b"="
    for name, value in headers:
        if name == b"set-cookie" and value.startswith(prefix):
            cookie = value[len(prefix) :].split(b";", 1)[0].strip(b'"')
            if cookie:
                return _hashed(b"s:" + cookie)
    return ""


class RoutingScope:
    """ASGI middleware: HTTP requests may read from the replica (see the module docstring)."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state = RequestRouting(client=client_key(scope.get("headers", [])))
        token = _state.set(state)

        async def send_and_pin(message):
            if message["type"] == "http.response.start" and state.wrote:
                key = new_session_key(message.get("headers", []))
                if key and key != state.client:
                    await sync_to_async(_pin_client)(key)
            await send(message)

        try:
            await self.app(scope, receive, send_and_pin)
        finally:
            _state.reset(token)


def _pin_key(client: str) -> str:
    return f"memoryhub:pin:{client}"


def _routing_cache():
    return caches["routing"]


def _is_pinned(state: RequestRouting) -> bool:
    if state.pinned is None:
        if not state.client:
            state.pinned = False
        else:
            try:
                state.pinned = bool(_routing_cache().get(_pin_key(state.client)))
            except Exception:  # the shared cache is down: we cannot know, so read the primary
                logger.warning("routing cache unavailable; reading from the primary")
                state.pinned = True
    return state.pinned


def _pin(state: RequestRouting) -> None:
    state.wrote = True
    state.pinned = True
    if state.client:
        _pin_client(state.client)


def _pin_client(client: str) -> None:
    try:
        _routing_cache().set(_pin_key(client), 1, timeout=settings.REPLICA_PIN_SECONDS)
    except Exception:
        logger.warning("routing cache unavailable; read-your-writes pin not shared")


# --- Server health (per process) ----------------------------------------------------------

# How long a failed server is left alone before the next probe (a refused connect costs ~1 ms;
# a server that does not answer costs one thread a probe timeout, the others skip it). Short,
# so every process notices within a second that the server is back.
DOWN_SECONDS = 1.0
_down_until: dict[str, float] = {}
_health_lock = threading.Lock()


def probe(alias: str, timeout: int = 3) -> bool:
    """True when the server behind `alias` accepts a new connection and answers."""
    s = connections[alias].settings_dict
    try:
        with psycopg.connect(
            dbname=s["NAME"],
            user=s["USER"],
            password=s["PASSWORD"],
            host=s["HOST"],
            port=s["PORT"] or None,
            connect_timeout=timeout,
        ) as conn:
            conn.execute("SELECT 1")
        return True
    except Exception:
        return False


def mark_down(alias: str) -> None:
    with _health_lock:
        first = alias not in _down_until
        _down_until[alias] = time.monotonic() + DOWN_SECONDS
    if first:
        logger.warning("database %s is down; routing around it", alias)


def is_up(alias: str) -> bool:
    """False while `alias` is marked down; once its mark expires, a probe decides."""
    until = _down_until.get(alias)
    if until is None:
        return True
    if time.monotonic() < until:
        return False
    if not _health_lock.acquire(blocking=False):
        return False  # another thread is probing: still down until it says otherwise
    try:
        if _down_until.get(alias) != until:  # another thread probed meanwhile
            return alias not in _down_until
        if not probe(alias):
            _down_until[alias] = time.monotonic() + DOWN_SECONDS
            return False
        del _down_until[alias]
    finally:
        _health_lock.release()
    logger.warning("database %s is back", alias)
    # Its pooled connections died with it; a fresh pool connects at once.
    connections[alias].close_pool()
    return True


def connection_failed(alias: str) -> None:
    """Called by the backend when a query or connect on `alias` raised an OperationalError."""
    state = _state.get()
    if state is not None:
        state.failed_alias = alias
        state.avoid.add(alias)
    if alias not in _down_until and not probe(alias):
        mark_down(alias)


# --- The router -----------------------------------------------------------------------------


def read_alias() -> str:
    """Where a read issued now goes."""
    if not replica_configured():
        return PRIMARY
    state = _state.get()
    if state is None or state.wrote or connections[PRIMARY].in_atomic_block:
        return PRIMARY  # jobs and commands, and a request after its first write
    if PRIMARY in state.avoid:
        return REPLICA  # this request's read failed on the primary: it runs again here
    preferred = PRIMARY if REPLICA in state.avoid or _is_pinned(state) else REPLICA
    if is_up(preferred):
        return preferred
    other = REPLICA if preferred == PRIMARY else PRIMARY
    if other in state.avoid:
        return preferred
    return other if is_up(other) else preferred


class PrimaryReplicaRouter:
    def db_for_read(self, model, **hints):
        return read_alias()

    def db_for_write(self, model, **hints):
        state = _state.get()
        if state is not None and not state.wrote and model._meta.label_lower not in UNPINNED_MODELS:
            _pin(state)
        return PRIMARY

    def allow_relation(self, obj1, obj2, **hints):
        return True  # one database, two servers

    def allow_migrate(self, db, app_label, model_name=None, **hints):
        return db == PRIMARY


class _ReadConnection:
    """`django.db.connection` for the server reads go to now (raw SQL reads)."""

    def __getattr__(self, name):
        return getattr(connections[read_alias()], name)


read_connection = _ReadConnection()


def retry_read() -> bool:
    """After a failed read on one server: True if the request may simply run again on the
    other (it has written nothing: a write sends every later read of it to the primary)."""
    state = _state.get()
    if state is None or state.failed_alias is None or state.wrote:
        return False
    if {PRIMARY, REPLICA} <= state.avoid:
        return False  # both failed: nothing left to try
    logger.warning("a read failed on %r; the request runs again", state.failed_alias)
    state.failed_alias = None
    return True


class ReplicaRetryMiddleware:
    """Django middleware: a request whose read failed on one server (before it wrote anything)
    runs once more on the other, so a server that stops under load costs no reader an error.
    Requests with a body other than JSON (uploads) are not buffered and not retried."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if _state.get() is None or not replica_configured():
            return self.get_response(request)
        if request.method not in ("GET", "HEAD", "OPTIONS"):
            if request.content_type != "application/json":
                return self.get_response(request)
            try:
                request.body  # noqa: B018 - buffered, so a retry can parse it again
            except RequestDataTooBig:
                return self.get_response(request)  # the view answers 413
        response = self.get_response(request)
        if response.status_code >= 500 and retry_read():
            # The body was read into request.body above, so the view can parse it again.
            logger.warning("a read failed on one database server; answering from the other")
            response = self.get_response(request)
        return response
