"""MCP over streamable HTTP at /mcp: tools listed, auth refused, writes and reads scoped."""

from __future__ import annotations

import httpx
import pytest

from apps.memories.models import Memory

from .client import http_client, run, structured, text_of

NEW_TOOLS = {
    "memory_search",
    "remember",
    "remember_batch",
    "batch_status",
    "link_memories",
    "memory_feedback",
    "get_memory",
    "update_memory",
    "forget",
    "memory_history",
    "memory_why",
}
OLD_TOOLS = {
    "retrieve_memory",
    "recall_memory",
    "recall_by_timeframe",
    "retrieve_with_quality_boost",
    "exact_match_retrieve",
    "debug_retrieve",
}


def test_lists_every_tool_with_a_described_schema(asgi_server, tokens):
    async def scenario():
        async with http_client(asgi_server, tokens.alpha_rw) as client:
            return (await client.list_tools()).tools

    tools = {tool.name: tool for tool in run(scenario)}
    assert set(tools) == NEW_TOOLS | OLD_TOOLS
    for tool in tools.values():
        assert tool.description, tool.name
        for name, prop in tool.input_schema["properties"].items():
            assert prop.get("description") or name in {"items"}, (tool.name, name)
    search = tools["memory_search"].input_schema
    assert search["required"] == ["query"]
    assert search["properties"]["limit"]["maximum"] == 100
    assert set(search["properties"]["mode"]["enum"]) == {"hybrid", "semantic", "exact", "deep"}
    assert tools["forget"].annotations.destructive_hint is True


def _descriptions(schema) -> list[str]:
    """Every "description" anywhere in a JSON schema ($defs and nested properties too)."""
    if isinstance(schema, dict):
        own = [schema["description"]] if isinstance(schema.get("description"), str) else []
        return own + [d for value in schema.values() for d in _descriptions(value)]
    if isinstance(schema, list):
        return [d for value in schema for d in _descriptions(value)]
    return []


def test_tool_descriptions_read_as_plain_sentences(asgi_server, tokens):
    """No docstring indentation or source line breaks reach the client: the tools' own
    descriptions and their arguments' read as one line each."""

    async def scenario():
        async with http_client(asgi_server, tokens.alpha_rw) as client:
            return (await client.list_tools()).tools

    tools = run(scenario)
    for tool in tools:
        texts = [tool.description, *_descriptions(tool.input_schema)]
        for text in texts:
            assert "  " not in text and "\n" not in text, (tool.name, text)
    search = next(t for t in tools if t.name == "memory_search").description
    assert "Returns the best matches (id, content, score, why each ranked)" in search


@pytest.mark.parametrize("header", [None, "Bearer mh_not-a-real-token", "Basic abc"])
def test_missing_or_wrong_token_is_refused(asgi_server, tokens, header):
    headers = {"Authorization": header} if header else {}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    response = httpx.post(
        f"{asgi_server}/mcp",
        json=body,
        headers={**headers, "Accept": "application/json, text/event-stream"},
    )
    assert response.status_code == 401
    assert "token" in response.json()["detail"]

    async def scenario():
        async with http_client(asgi_server, header.split()[-1] if header else None) as client:
            await client.list_tools()

    with pytest.raises(Exception):  # noqa: B017  the client cannot even connect
        run(scenario)


def test_remember_get_update_link_forget(asgi_server, tokens, embedding_model):
    async def scenario():
        async with http_client(asgi_server, tokens.alpha_rw) as client:
            first = await client.call_tool(
                "remember",
                {
                    "content": "We chose Postgres advisory locks to serialize the nightly import.",
                    "title": "Import locking",
                    "category": "decision",
                    "tags": ["import"],
                },
            )
            second = await client.call_tool(
                "remember", {"content": "Workaround: retry the import when the lock is busy."}
            )
            a, b = structured(first)["id"], structured(second)["id"]
            again = await client.call_tool(
                "remember",
                {"content": "We chose Postgres advisory locks to serialize the nightly import."},
            )
            got = await client.call_tool("get_memory", {"memory_id": a})
            link = await client.call_tool(
                "link_memories", {"source_id": b, "target_id": a, "relation": "depends_on"}
            )
            updated = await client.call_tool(
                "update_memory", {"memory_id": a, "tags": ["import", "locking"], "importance": 0.9}
            )
            linked = await client.call_tool("get_memory", {"memory_id": a})
            forgot = await client.call_tool("forget", {"memory_id": b})
            deleted = await client.call_tool("forget", {"memory_id": a, "permanent": True})
            return first, again, got, link, updated, linked, forgot, deleted, a, b

    first, again, got, link, updated, linked, forgot, deleted, a, b = run(scenario)
    assert not first.is_error and f"`{a}`" in text_of(first)
    assert structured(first)["created"] is True
    assert structured(again)["created"] is False and structured(again)["duplicate_of"] == a
    assert structured(got)["title"] == "Import locking"
    assert structured(got)["namespace"] == "alpha"
    assert "advisory locks" in text_of(got)
    assert structured(link)["relation"] == "depends_on"
    assert structured(updated)["tags"] == ["import", "locking"]
    assert structured(updated)["importance"] == 0.9
    assert [e["relation"] for e in structured(linked)["edges"]] == ["depends_on"]
    assert "Archived" in text_of(forgot)
    assert Memory.objects.get(pk=b).archived is True
    assert not deleted.is_error
    assert not Memory.objects.filter(pk=a).exists()


def test_remember_batch_is_all_or_nothing(asgi_server, tokens, embedding_model):
    async def scenario():
        async with http_client(asgi_server, tokens.alpha_rw) as client:
            ok = await client.call_tool(
                "remember_batch",
                {"items": [{"content": "Cache invalidation runs hourly."}, {"content": "B"}]},
            )
            bad = await client.call_tool(
                "remember_batch",
                {"items": [{"content": "fine"}, {"content": "x", "category": "gossip"}]},
            )
            return ok, bad

    ok, bad = run(scenario)
    assert structured(ok)["created"] == 2
    assert bad.is_error and "items" in text_of(bad)
    assert Memory.objects.filter(namespace=tokens.alpha).count() == 2


def test_bad_arguments_are_tool_errors_not_crashes(asgi_server, tokens):
    calls = [
        ("memory_search", {"query": "x", "limit": 500}),
        ("retrieve_memory", {"query": ""}),
        ("memory_search", {}),
        ("memory_search", {"query": "x", "after": "not a date"}),
        ("memory_search", {"query": "x" * 5000}),
        ("remember", {"content": "x", "category": "gossip"}),
        ("remember", {"content": ""}),
        ("get_memory", {"memory_id": "not-a-uuid"}),
        ("batch_status", {"job_id": "not-a-job"}),
        ("get_memory", {"memory_id": "00000000-0000-0000-0000-000000000000"}),
        ("link_memories", {"source_id": "x", "target_id": "y", "relation": "loves"}),
        ("memory_feedback", {"query_log_id": 999999, "was_useful": True}),
        ("no_such_tool", {}),
    ]

    async def scenario():
        async with http_client(asgi_server, tokens.alpha_rw) as client:
            results = []
            for name, arguments in calls:
                try:
                    results.append(await client.call_tool(name, arguments))
                except Exception as exc:  # a JSON-RPC error is an MCP error too
                    results.append(exc)
            alive = await client.list_tools()
            return results, alive

    results, alive = run(scenario)
    for (name, arguments), result in zip(calls, results, strict=True):
        if isinstance(result, Exception):
            assert "Internal" not in str(result), (name, result)
        else:
            assert result.is_error, (name, arguments, text_of(result))
            assert text_of(result), name
    assert len(alive.tools) == 17


def test_token_never_reaches_another_namespace(asgi_server, tokens, embedding_model):
    async def scenario():
        async with http_client(asgi_server, tokens.beta_rw) as client:
            secret = await client.call_tool("remember", {"content": "Beta's launch code is 1234."})
        beta_id = structured(secret)["id"]
        async with http_client(asgi_server, tokens.alpha_rw) as client:
            return beta_id, [
                await client.call_tool("get_memory", {"memory_id": beta_id}),
                await client.call_tool("update_memory", {"memory_id": beta_id, "title": "x"}),
                await client.call_tool("forget", {"memory_id": beta_id, "permanent": True}),
                await client.call_tool("remember", {"content": "sneaky", "namespace": "beta"}),
                await client.call_tool("memory_search", {"query": "launch", "namespace": "beta"}),
            ]

    beta_id, results = run(scenario)
    for result in results:
        assert result.is_error
        assert "1234" not in text_of(result)
    memory = Memory.objects.get(pk=beta_id)
    assert memory.title == "" and not memory.archived
    assert not Memory.objects.filter(content="sneaky").exists()


def test_read_only_token_reads_but_cannot_write(asgi_server, tokens, embedding_model):
    async def scenario():
        async with http_client(asgi_server, tokens.alpha_rw) as client:
            stored = await client.call_tool("remember", {"content": "Read-only tokens exist."})
        memory_id = structured(stored)["id"]
        async with http_client(asgi_server, tokens.alpha_ro) as client:
            read = await client.call_tool("get_memory", {"memory_id": memory_id})
            write = await client.call_tool("remember", {"content": "not allowed"})
            forget = await client.call_tool("forget", {"memory_id": memory_id})
        return read, write, forget

    read, write, forget = run(scenario)
    assert not read.is_error
    assert write.is_error and "read-only" in text_of(write)
    assert forget.is_error
    assert Memory.objects.filter(namespace=tokens.alpha).count() == 1


def test_token_with_several_namespaces_must_name_one(asgi_server, tokens, embedding_model):
    async def scenario():
        async with http_client(asgi_server, tokens.both_rw) as client:
            unnamed = await client.call_tool("remember", {"content": "Which namespace?"})
            named = await client.call_tool(
                "remember", {"content": "Into beta.", "namespace": "beta"}
            )
            return unnamed, named

    unnamed, named = run(scenario)
    assert unnamed.is_error and "namespace" in text_of(unnamed)
    assert not named.is_error
    assert Memory.objects.get(content="Into beta.").namespace == tokens.beta


def test_oversized_bodies_and_foreign_hosts_are_refused(asgi_server, tokens, settings):
    headers = {
        "Authorization": f"Bearer {tokens.alpha_rw}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
    }
    content = "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "remember", "arguments": {"content": content}}}  # fmt: skip
    too_big = httpx.post(f"{asgi_server}/mcp", json=body, headers=headers, timeout=60)
    assert too_big.status_code == 413
    rebound = httpx.post(
        f"{asgi_server}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
        headers={**headers, "Host": "attacker.example"},
    )
    assert rebound.status_code == 421
    assert not Memory.objects.exists()
