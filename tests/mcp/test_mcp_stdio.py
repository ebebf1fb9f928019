"""MCP over stdio: `python manage.py mcp_stdio --token T` in a subprocess, driven by the official
client, against the test database (rows committed by `transactional_db`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.db import connection
from mcp import Client, StdioServerParameters

from apps.memories.models import Memory
from apps.memories.services import memory_create

from .client import run, structured, text_of

BASE_DIR = Path(__file__).resolve().parents[2]


def stdio_params(raw_token: str) -> StdioServerParameters:
    """The command a desktop client would run, pointed at the test database."""
    name = connection.settings_dict["NAME"]
    env = dict(os.environ, EMBEDDED_DATABASE_NAME=name)
    if env.get("DATABASE_URL"):
        parts = urlsplit(env["DATABASE_URL"])
        env["DATABASE_URL"] = urlunsplit(parts._replace(path=f"/{name}"))
    return StdioServerParameters(
        command=sys.executable,
        args=["manage.py", "mcp_stdio", "--token", raw_token],
        env=env,
        cwd=str(BASE_DIR),
    )


def test_stdio_serves_the_same_tools_scoped_to_the_token(tokens, embedding_model):
    beta_memory = memory_create(namespace=tokens.beta, content="Beta-only: the blue door.").memory

    async def scenario():
        async with Client(stdio_params(tokens.alpha_rw), read_timeout_seconds=120) as client:
            listed = await client.list_tools()
            stored = await client.call_tool(
                "remember",
                {"content": "Desktop clients talk to memoryhub over stdio.", "tags": ["mcp"]},
            )
            found = await client.call_tool(
                "memory_search", {"query": "how do desktop clients connect"}
            )
            old = await client.call_tool("retrieve_memory", {"query": "stdio", "n_results": 1})
            bad = await client.call_tool("memory_search", {"query": "x", "limit": 0})
            foreign = await client.call_tool("get_memory", {"memory_id": str(beta_memory.id)})
            foreign_ns = await client.call_tool(
                "remember", {"content": "sneaky", "namespace": "beta"}
            )
            return listed, stored, found, old, bad, foreign, foreign_ns

    listed, stored, found, old, bad, foreign, foreign_ns = run(scenario)
    assert len(listed.tools) == 17
    memory_id = structured(stored)["id"]
    assert Memory.objects.get(pk=memory_id).namespace == tokens.alpha
    assert structured(found)["memories"][0]["id"] == memory_id
    assert "over stdio" in text_of(found)
    assert [m["id"] for m in structured(old)["memories"]] == [memory_id]
    assert bad.is_error
    assert foreign.is_error and "blue door" not in text_of(foreign)
    assert foreign_ns.is_error
    assert not Memory.objects.filter(content="sneaky").exists()


def test_stdio_read_only_token_cannot_write(tokens, embedding_model):
    async def scenario():
        async with Client(stdio_params(tokens.alpha_ro), read_timeout_seconds=120) as client:
            return await client.call_tool("remember", {"content": "should not be stored"})

    result = run(scenario)
    assert result.is_error and "read-only" in text_of(result)
    assert Memory.objects.count() == 0


def test_stdio_refuses_a_wrong_token(tokens):
    async def scenario():
        async with Client(stdio_params("mh_wrong"), read_timeout_seconds=60) as client:
            await client.list_tools()

    with pytest.raises(Exception):  # noqa: B017  the server exits before the handshake
        run(scenario)


def test_stdio_exits_cleanly_when_stdin_closes_right_after_a_call(tokens, embedding_model):
    """A client that sends its call and closes stdin at once (a pipe, a desktop client
    quitting) leaves a process that exits with 0, not one aborted at interpreter exit."""
    params = stdio_params(tokens.alpha_rw)
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}}
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "memory_search", "arguments": {"query": "anything"}},
        },
    ]
    stdin = "".join(json.dumps(m) + "\n" for m in messages)
    for _ in range(2):  # the abort came at random moments: try twice
        done = subprocess.run(
            [params.command, *params.args],
            input=stdin,
            capture_output=True,
            text=True,
            env=params.env,
            cwd=params.cwd,
            timeout=180,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert "terminate called" not in done.stderr
        assert json.loads(done.stdout.splitlines()[0])["id"] == 1
