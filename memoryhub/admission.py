"""Admission to a web process: at most a few requests do their work at once, the rest wait.

A request's work is Python under one GIL plus PostgreSQL, so ten requests running together in
one process share the core slice by slice, and each takes about ten times its own cost: a
search that costs 20 ms waits out everything else that is in flight, and its latency varies
with what it happens to run beside. Admitting only `limit` at a time (2 by measurement:
docs/benchmarks.md) and queueing the rest on the event loop serves them first come first served
at the same throughput, with a much narrower spread of latency.

Waiting requests stand in two lanes. Reads (searches, GET pages, read-only MCP tools) go first:
an assistant waits for a search before it can answer, while a write only records what was
learnt. So that writes never starve, every `write_every`-th admission goes to a waiting write.
Health checks and static files are never queued: a busy process must still say it is alive.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from functools import cache

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from apps.mcp.server import read_only_tool_names

READ, WRITE = "read", "write"
NEVER_QUEUED = ("/healthz", "/static/", "/favicon.ico")
READ_POSTS = ("/api/v1/search", "/api/v1/search/")


class Lanes:
    """The counting part of the gate, without ASGI: `limit` slots, a read and a write lane."""

    def __init__(self, limit: int, write_every: int):
        self.limit = limit
        self.write_every = max(write_every, 1)
        self.running = 0
        self.waiting: dict[str, deque[asyncio.Future]] = {READ: deque(), WRITE: deque()}
        self.reads_in_a_row = 0

    async def acquire(self, lane: str) -> None:
        if self.running < self.limit and not any(self.waiting.values()):
            self.running += 1
            return
        turn = asyncio.get_running_loop().create_future()
        self.waiting[lane].append(turn)
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self.release()  # admitted in the same instant: hand the slot on
            else:
                self.waiting[lane].remove(turn)
            raise

    def release(self) -> None:
        self.running -= 1
        while self.running < self.limit:
            turn = self._next()
            if turn is None:
                return
            if not turn.done():
                self.running += 1
                turn.set_result(None)

    def _next(self) -> asyncio.Future | None:
        reads, writes = self.waiting[READ], self.waiting[WRITE]
        if writes and (not reads or self.reads_in_a_row >= self.write_every - 1):
            self.reads_in_a_row = 0
            return writes.popleft()
        if reads:
            self.reads_in_a_row += 1
            return reads.popleft()
        return None


class AdmissionGate:
    """ASGI wrapper that runs HTTP requests through `Lanes`. It sits inside RequestBodyLimit,
    which hands over the whole body as one message, so an MCP call can be read for its tool."""

    def __init__(self, app: ASGIApp, *, limit: int, write_every: int, mcp_path: str = "/mcp"):
        self.app = app
        self.lanes = Lanes(limit, write_every)
        self.mcp_path = mcp_path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or path.startswith(NEVER_QUEUED):
            await self.app(scope, receive, send)
            return
        first: Message | None = None
        if scope.get("method") == "POST" and path.rstrip("/") == self.mcp_path:
            first = await receive()
        lane = lane_of(scope, first)
        await self.lanes.acquire(lane)
        held = True

        def let_go() -> None:
            nonlocal held
            if held:
                held = False
                self.lanes.release()

        async def send_then_let_go(message: Message) -> None:
            # The work is done once the response starts; a long download (an export) must
            # not hold a place in line while the client reads it.
            if message["type"] == "http.response.start":
                let_go()
            await send(message)

        body = _replaying(first, receive) if first else receive
        try:
            await self.app(scope, body, send_then_let_go)
        finally:
            let_go()


def lane_of(scope: Scope, first: Message | None = None) -> str:
    method = scope.get("method", "GET")
    if method in ("GET", "HEAD", "OPTIONS"):
        return READ
    if method == "POST" and scope.get("path", "") in READ_POSTS:
        return READ
    if first is not None:
        return _mcp_lane(first.get("body", b""))
    return WRITE


def _mcp_lane(body: bytes) -> str:
    """A JSON-RPC tool call of a read-only tool, or a message that calls no tool, is a read."""
    try:
        message = json.loads(body or b"{}")
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
        return READ  # answered with an error at once
    calls = message if isinstance(message, list) else [message]
    for call in calls:
        if not isinstance(call, dict) or call.get("method") != "tools/call":
            continue
        params = call.get("params")
        name = params.get("name") if isinstance(params, dict) else None
        if name not in read_only_tools():
            return WRITE
    return READ


@cache
def read_only_tools() -> frozenset[str]:
    return read_only_tool_names()


def _replaying(first: Message, receive: Receive) -> Receive:
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return first
        return await receive()

    return replay
