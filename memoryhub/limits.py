"""ASGI wrapper enforcing the request-body limit on the bytes actually received.

Django's own limit reads Content-Length, so a chunked body (no Content-Length) of any size
reached the views, and Django's ASGI request then read a chunked body as empty (a chunked
PATCH answered 200 and changed nothing). This wrapper sits in front of both Django and MCP:
it reads the body up to the limit, answers 413 JSON beyond it, and hands the app the whole body
with a correct Content-Length, chunked or not.
"""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class RequestBodyLimit:
    def __init__(self, app: ASGIApp, max_bytes: int):
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            await self._too_large(send, declared)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
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

    async def _too_large(self, send: Send, size: int | None) -> None:
        what = f"{size} bytes" if size is not None else "larger than that"
        payload = json.dumps(
            {"detail": f"Request body too large: {what}; the limit is {self.max_bytes} bytes."}
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
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
