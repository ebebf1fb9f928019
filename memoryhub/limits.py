"""ASGI wrapper enforcing the request-body limit on the bytes actually received.

Django's own limit reads Content-Length, so a chunked body (no Content-Length) of any size
reached the views, and Django's ASGI request then read a chunked body as empty (a chunked
PATCH answered 200 and changed nothing). This wrapper sits in front of both Django and MCP:
it reads the body up to the limit, answers 413 JSON beyond it, and hands the app the whole body
with a correct Content-Length, chunked or not.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class RequestBodyLimit:
    """`max_bytes` for every body, except uploads to paths matching `upload_paths`, which may
    reach `upload_max_bytes` and are passed on as they arrive (Django spools them to disk), not
    held in memory here. A client that stops sending its body for `read_timeout` seconds gets
    408: a half-sent request does not hold a worker forever. The last two may be callables,
    read per request (settings a test or an operator changes)."""

    def __init__(
        self,
        app: ASGIApp,
        max_bytes: int,
        *,
        upload_paths: str = "",
        upload_max_bytes: int | Callable[[], int] = 0,
        read_timeout: float | Callable[[], float] = 30.0,
    ):
        self.app = app
        self.max_bytes = max_bytes
        self.upload_paths = re.compile(upload_paths) if upload_paths else None
        self._upload_max_bytes = upload_max_bytes
        self._read_timeout = read_timeout

    @property
    def upload_max_bytes(self) -> int:
        value = self._upload_max_bytes
        return value() if callable(value) else value

    @property
    def read_timeout(self) -> float:
        value = self._read_timeout
        return value() if callable(value) else value

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if self.upload_paths and self.upload_paths.match(scope.get("path", "")):
            await self._upload(scope, receive, send, declared)
            return
        if declared is not None and declared > self.max_bytes:
            await self._too_large(send, declared)
            return
        chunks: list[bytes] = []
        size = 0
        timeout = self.read_timeout
        while True:
            try:
                message = await asyncio.wait_for(receive(), timeout)
            except TimeoutError:
                await self._timed_out(send)
                return
            if message["type"] == "http.disconnect":
                return
            body = message.get("body", b"")
            size += len(body)
            if size > self.max_bytes:
                await self._too_large(send, None)
                return
            chunks.append(body)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        headers = [
            (name, value)
            for name, value in scope.get("headers", [])
            if name not in (b"content-length", b"transfer-encoding")
        ]
        if body or scope.get("method") not in ("GET", "HEAD", "DELETE", "OPTIONS"):
            headers.append((b"content-length", str(len(body)).encode()))
        await self.app({**scope, "headers": headers}, replay, send)

    async def _upload(self, scope: Scope, receive: Receive, send: Send, declared) -> None:
        """An import upload: counted as it streams through, never buffered here."""
        limit = self.upload_max_bytes
        if declared is not None and declared > limit:
            await self._upload_refused(scope, send, declared, limit)
            return
        size = 0
        started = timed_out = body_done = False
        timeout = self.read_timeout

        async def counted() -> Message:
            nonlocal size, timed_out, body_done
            if body_done:  # the app listening for a disconnect: no deadline on that
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), timeout)
            except TimeoutError:
                timed_out = True
                return {"type": "http.disconnect"}
            size += len(message.get("body", b""))
            if size > limit:  # a chunked body past the limit: the app sees the client leave
                return {"type": "http.disconnect"}
            body_done = message["type"] == "http.request" and not message.get("more_body")
            return message

        async def tracked(message: Message) -> None:
            nonlocal started
            started = True
            await send(message)

        await self.app(scope, counted, tracked)
        if not started and size > limit:
            await self._upload_refused(scope, send, None, limit)
        elif not started and timed_out:
            await self._timed_out(send)

    async def _upload_refused(self, scope: Scope, send: Send, size, limit: int) -> None:
        """413; to the import page (htmx) as the report it shows in place of a run."""
        if (b"hx-request", b"true") not in scope.get("headers", []):
            await self._too_large(send, size, limit)
            return
        what = f"Is {size} bytes" if size is not None else "Is larger than that"
        body = (
            '<div class="card import-report failed" role="alert"><h2>Nothing imported</h2>'
            f'<ul class="problems"><li>file: {what}; the limit is {limit} bytes.</li></ul></div>'
        )
        await self._answer(send, 413, body, content_type=b"text/html; charset=utf-8")

    async def _timed_out(self, send: Send) -> None:
        await self._answer(
            send, 408, f"The request body did not arrive within {self.read_timeout:g} s."
        )

    async def _too_large(self, send: Send, size: int | None, limit: int | None = None) -> None:
        limit = limit or self.max_bytes
        what = f"{size} bytes" if size is not None else "larger than that"
        await self._answer(
            send, 413, f"Request body too large: {what}; the limit is {limit} bytes."
        )

    async def _answer(
        self, send: Send, status: int, detail: str, content_type: bytes = b""
    ) -> None:
        if content_type:
            payload = detail.encode()
        else:
            payload, content_type = json.dumps({"detail": detail}).encode(), b"application/json"
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", content_type),
                    (b"content-length", str(len(payload)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": payload})


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None
