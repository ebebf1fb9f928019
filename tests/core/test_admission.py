"""The web process's line: a few requests work at once, the rest wait, searches first.

Driven through the ASGI interface with real event-loop scheduling: each fake request records
when it starts and holds its place until the test lets it finish."""

from __future__ import annotations

import asyncio
import json

import pytest

from memoryhub.admission import READ, WRITE, AdmissionGate, lane_of


class Recorder:
    """An ASGI app that notes which requests run, and finishes one when told to."""

    def __init__(self):
        self.started: list[str] = []
        self.running = 0
        self.most_at_once = 0
        self.bodies: dict[str, bytes] = {}
        self.finish: dict[str, asyncio.Event] = {}

    async def __call__(self, scope, receive, send):
        name = dict(scope["headers"])[b"x-name"].decode()
        self.started.append(name)
        self.running += 1
        self.most_at_once = max(self.most_at_once, self.running)
        self.bodies[name] = (await receive()).get("body", b"")
        await self.finish.setdefault(name, asyncio.Event()).wait()
        self.running -= 1
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


def _scope(name: str, method: str = "POST", path: str = "/api/v1/memories/") -> dict:
    return {"type": "http", "method": method, "path": path, "headers": [(b"x-name", name.encode())]}


def _mcp_body(tool: str) -> bytes:
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool}}
    return json.dumps(call).encode()


async def _request(gate, scope, body: bytes = b"") -> None:
    async def receive():
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message):
        pass

    await gate(scope, receive, send)


async def _settle():
    for _ in range(20):
        await asyncio.sleep(0)


def test_searches_go_ahead_of_waiting_writes_but_writes_keep_their_turn():
    async def scenario():
        app = Recorder()
        gate = AdmissionGate(app, limit=1, write_every=3)
        tasks = [asyncio.create_task(_request(gate, _scope("busy")))]
        await _settle()
        for name in ("write-1", "write-2"):
            tasks.append(asyncio.create_task(_request(gate, _scope(name))))
        await _settle()
        for n in range(1, 5):
            scope = _scope(f"search-{n}", path="/api/v1/search/")
            tasks.append(asyncio.create_task(_request(gate, scope)))
        await _settle()
        assert app.started == ["busy"]  # everyone else waits
        while len(app.started) < 7:
            app.finish.setdefault(app.started[-1], asyncio.Event()).set()
            await _settle()
        app.finish[app.started[-1]].set()
        await asyncio.gather(*tasks)
        return app

    app = asyncio.run(scenario())
    # Two searches, then the longest-waiting write, then the rest in the same rhythm.
    assert app.started == [
        "busy",
        "search-1",
        "search-2",
        "write-1",
        "search-3",
        "search-4",
        "write-2",
    ]
    assert app.most_at_once == 1


def test_no_more_than_the_limit_work_at_once_and_health_checks_never_wait():
    async def scenario():
        app = Recorder()
        gate = AdmissionGate(app, limit=2, write_every=3)
        tasks = [asyncio.create_task(_request(gate, _scope(f"r{n}"))) for n in range(6)]
        await _settle()
        assert len(app.started) == 2
        # The process is full, but it still says whether it is alive.
        health = asyncio.create_task(_request(gate, _scope("health", "GET", "/healthz")))
        await _settle()
        assert "health" in app.started
        app.finish.setdefault("health", asyncio.Event()).set()
        await health
        for n in range(6):
            app.finish.setdefault(f"r{n}", asyncio.Event()).set()
        await asyncio.gather(*tasks)
        return app

    app = asyncio.run(scenario())
    assert app.most_at_once == 3  # two in line's slots plus the health check
    assert sorted(app.started) == sorted([*(f"r{n}" for n in range(6)), "health"])


def test_an_mcp_call_is_read_for_its_tool_and_handed_on_whole():
    async def scenario():
        app = Recorder()
        gate = AdmissionGate(app, limit=4, write_every=3)
        body = _mcp_body("memory_search")
        app.finish["mcp"] = asyncio.Event()
        app.finish["mcp"].set()
        await _request(gate, _scope("mcp", path="/mcp"), body)
        return app, body

    app, body = asyncio.run(scenario())
    assert app.bodies["mcp"] == body


@pytest.mark.parametrize(
    ("method", "path", "body", "lane"),
    [
        ("GET", "/ns/alpha/memories/", None, READ),
        ("POST", "/api/v1/search/", None, READ),
        ("POST", "/api/v1/memories/", None, WRITE),
        ("DELETE", "/api/v1/memories/x/", None, WRITE),
        ("POST", "/mcp", _mcp_body("memory_search"), READ),
        ("POST", "/mcp", _mcp_body("retrieve_memory"), READ),
        ("POST", "/mcp", _mcp_body("remember"), WRITE),
        ("POST", "/mcp", _mcp_body("forget"), WRITE),
        ("POST", "/mcp", b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}', READ),
        ("POST", "/mcp", b"not json", READ),
        ("POST", "/mcp", b"[" * 100_000 + b"]" * 100_000, READ),
    ],
)
def test_which_line_a_request_stands_in(method, path, body, lane):
    first = None if body is None else {"type": "http.request", "body": body}
    assert lane_of({"type": "http", "method": method, "path": path}, first) == lane
