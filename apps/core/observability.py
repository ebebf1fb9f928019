"""One request id per request, shared by the JSON logs, the X-Request-ID response header, the
QueryLog row and MCP calls, plus per-route latency for /metrics.

Why an ASGI middleware rather than a Django one: the MCP endpoint is served beside Django (see
memoryhub/asgi.py), and both must carry the same id. The id lives in a context variable; asgiref
copies the context into the thread that runs a sync Django view, so code anywhere below
(`current_request_id()`) sees it without it being passed along.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from contextvars import ContextVar

from django.urls import Resolver404, resolve

from . import metrics

logger = logging.getLogger("memoryhub.request")

HEADER = b"x-request-id"
# A caller's id is kept only if it is short and plain (it goes into logs and headers as is).
_VALID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")

_request_id: ContextVar[str | None] = ContextVar("request_id", default=None)


def current_request_id() -> str | None:
    return _request_id.get()


class RequestIdFilter(logging.Filter):
    """Adds `request_id` to every log record (None outside a request)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = _request_id.get()
        return True


# Marks a request that /healthz answered "starting": see StartingIsNotAnError.
ANSWERED_STARTING = "_answered_starting"


def mark_answered_starting(request) -> None:
    setattr(request, ANSWERED_STARTING, True)


class StartingIsNotAnError(logging.Filter):
    """Drops Django's ERROR line for a 503 that /healthz gives while the server warms up: that
    answer is expected (a probe polls until 200), and a clean start logged a dozen ERROR lines
    that a newcomer read as failures. The warm-up itself is logged once at INFO
    (apps/core/readiness.py); a 503 of a degraded server is still an ERROR."""

    def filter(self, record: logging.LogRecord) -> bool:
        request = getattr(record, "request", None)
        return not getattr(request, ANSWERED_STARTING, False)


def _incoming_id(scope) -> str:
    for name, value in scope.get("headers", []):
        if name == HEADER:
            candidate = value.decode("latin-1").strip()
            if _VALID.match(candidate):
                return candidate
    return uuid.uuid4().hex


def _route(path: str, mcp_path: str) -> str:
    """The URL pattern (not the path, whose ids would explode the label set)."""
    if path == mcp_path or path.startswith(mcp_path + "/"):
        return mcp_path
    try:
        match = resolve(path)
    except Resolver404:
        return "unmatched"
    if not match.route:
        return match.view_name or "unknown"
    # re_path routes ("search/?$", optional trailing slash) read as their path() equivalent.
    route = match.route.removesuffix("$").removesuffix("?")
    return "/" + route


# What the log says of a request whose client hung up before the answer was complete (nginx's
# "client closed request"), rather than the 500 of a request that never answered.
CLIENT_CLOSED_REQUEST = 499


class RequestContext:
    """ASGI middleware: set the request id, echo it in the response, log one JSON line and
    observe latency per route."""

    def __init__(self, app, *, mcp_path: str = "/mcp") -> None:
        self.app = app
        self.mcp_path = mcp_path

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = _incoming_id(scope)
        token = _request_id.set(request_id)
        started = time.perf_counter()
        status = 500
        finished = hung_up = False

        async def send_with_id(message):
            nonlocal status, finished
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != HEADER]
                headers.append((HEADER, request_id.encode()))
                message = {**message, "headers": headers}
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                finished = True
            await send(message)

        async def receive_watching():
            nonlocal hung_up
            message = await receive()
            if message["type"] == "http.disconnect":
                hung_up = True
            return message

        try:
            await self.app(scope, receive_watching, send_with_id)
        finally:
            if hung_up and not finished:
                status = CLIENT_CLOSED_REQUEST  # the client left; nothing failed here
            elapsed = time.perf_counter() - started
            path = scope.get("path", "")
            route = _route(path, self.mcp_path)
            metrics.observe_request(scope.get("method", ""), route, status, elapsed)
            logger.info(
                "%s %s %s",
                scope.get("method"),
                path,
                status,
                extra={
                    "method": scope.get("method"),
                    "path": path,
                    "route": route,
                    "status": status,
                    "duration_ms": round(elapsed * 1000, 2),
                },
            )
            _request_id.reset(token)
