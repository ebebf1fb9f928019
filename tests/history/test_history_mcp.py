"""Changes through MCP are recorded with the token and the "mcp" door; memory_history reads
them back (also for a deleted memory in the trash), scoped to the token's namespaces."""

from __future__ import annotations

import pytest

from tests.mcp.client import http_client, run, structured, text_of

pytestmark = pytest.mark.usefixtures("embedding_model")


def test_memory_history_over_mcp(asgi_server, tokens):
    async def scenario():
        async with http_client(asgi_server, tokens.alpha_rw) as client:
            stored = await client.call_tool("remember", {"content": "Staging uses port 8080"})
            memory_id = structured(stored)["id"]
            await client.call_tool(
                "update_memory", {"memory_id": memory_id, "content": "Staging uses port 8081"}
            )
            history = await client.call_tool(
                "memory_history", {"memory_id": memory_id, "namespace": "alpha"}
            )
            await client.call_tool("forget", {"memory_id": memory_id, "permanent": True})
            after_delete = await client.call_tool("memory_history", {"memory_id": memory_id})
        async with http_client(asgi_server, tokens.beta_rw) as client:
            foreign = await client.call_tool("memory_history", {"memory_id": memory_id})
        async with http_client(asgi_server, tokens.both_rw) as client:
            wrong_ns = await client.call_tool(
                "memory_history", {"memory_id": memory_id, "namespace": "beta"}
            )
        return history, after_delete, foreign, wrong_ns

    history, after_delete, foreign, wrong_ns = run(scenario)
    assert not history.is_error, text_of(history)
    update, create = structured(history)["revisions"]
    assert (update["action"], update["door"]) == ("update", "mcp")
    assert update["actor"].startswith("token a-rw")
    assert update["before"] == {"content": "Staging uses port 8080"}
    assert update["after"] == {"content": "Staging uses port 8081"}
    assert create["action"] == "create"
    assert "via mcp" in text_of(history)

    data = structured(after_delete)
    assert data["deleted"] is True
    assert [r["action"] for r in data["revisions"]] == ["delete", "update", "create"]
    for refused in (foreign, wrong_ns):
        assert refused.is_error and "8081" not in text_of(refused)
