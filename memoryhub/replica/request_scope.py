"""The ASGI middleware that gives each HTTP request its routing state (so its reads may go to
the replica), and the client key that the request's pin is stored under."""

from __future__ import annotations

import hashlib

from asgiref.sync import sync_to_async
from django.conf import settings

from .pinning import pin_client
from .state import RequestRouting, request_routing


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
    """ASGI middleware: HTTP requests may read from the replica (see the package docstring)."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state = RequestRouting(client=client_key(scope.get("headers", [])))
        token = request_routing.set(state)

        async def send_and_pin(message):
            if message["type"] == "http.response.start" and state.wrote:
                key = new_session_key(message.get("headers", []))
                if key and key != state.client:
                    await sync_to_async(pin_client)(key)
            await send(message)

        try:
            await self.app(scope, receive, send_and_pin)
        finally:
            request_routing.reset(token)
