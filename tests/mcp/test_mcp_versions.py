"""update_memory through MCP: an optional expected_version refuses a change on a memory changed
since; a change racing a REST PATCH of another field keeps both."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import httpx

from apps.memories.models import Memory
from tests.api.live import bearer

from .client import http_client, run, structured, text_of


def _update(base_url: str, token: str, arguments: dict):
    async def scenario():
        async with http_client(base_url, token) as client:
            return await client.call_tool("update_memory", arguments)

    return run(scenario)


def test_update_with_a_stale_expected_version_is_refused(asgi_server, tokens, embedding_model):
    auth = bearer(tokens.alpha_rw)
    created = httpx.post(
        f"{asgi_server}/api/v1/memories/", json={"content": "Backups live in S3."}, headers=auth
    )
    pk = created.json()["memory"]["id"]
    ok = _update(
        asgi_server, tokens.alpha_rw, {"memory_id": pk, "tier": "core", "expected_version": 1}
    )
    assert not ok.is_error and structured(ok)["version"] == 2
    stale = _update(
        asgi_server, tokens.alpha_rw, {"memory_id": pk, "title": "old", "expected_version": 1}
    )
    assert stale.is_error and "version 2" in text_of(stale)
    assert Memory.objects.get(pk=pk).title == ""


def test_mcp_and_rest_changing_different_fields_at_once_both_stay(
    asgi_server, tokens, embedding_model
):
    auth = bearer(tokens.alpha_rw)
    for trial in range(4):
        created = httpx.post(
            f"{asgi_server}/api/v1/memories/",
            json={"content": f"MCP race {trial}: logs rotate weekly."},
            headers=auth,
        )
        pk = created.json()["memory"]["id"]
        barrier = threading.Barrier(2)

        def mcp(pk=pk, barrier=barrier):
            barrier.wait()
            return _update(asgi_server, tokens.alpha_rw, {"memory_id": pk, "importance": 0.9})

        def rest(pk=pk, barrier=barrier):
            barrier.wait()
            url = f"{asgi_server}/api/v1/memories/{pk}/"
            return httpx.patch(url, json={"tier": "core"}, headers=auth, timeout=60)

        with ThreadPoolExecutor(2) as pool:
            via_mcp, via_rest = pool.submit(mcp), pool.submit(rest)
            assert not via_mcp.result().is_error and via_rest.result().status_code == 200
        stored = Memory.objects.get(pk=pk)
        assert (stored.importance, stored.tier, stored.version) == (0.9, "core", 3)
