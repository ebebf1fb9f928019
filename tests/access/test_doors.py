"""REST and MCP ask the one permission policy: change the policy and both doors follow."""

from __future__ import annotations

import threading

import httpx
import pytest

from apps.access.permissions import namespaces_for
from apps.core import permissions as seam
from apps.memories.models import Namespace
from apps.memories.services import memory_create
from tests.api.live import asgi_server, bearer, tokens  # noqa: F401  (fixtures)
from tests.mcp.client import http_client, run, structured, text_of


class SpyPolicy:
    """The real policy, recording every question, or refusing everything when `deny`."""

    def __init__(self):
        self.calls: list[tuple[str, str]] = []
        self.deny = False
        self._lock = threading.Lock()

    def __call__(self, principal, action):
        with self._lock:
            self.calls.append((type(principal).__name__, str(action)))
        return Namespace.objects.none() if self.deny else namespaces_for(principal, action)


@pytest.fixture
def spy(monkeypatch):
    policy = SpyPolicy()
    monkeypatch.setattr(seam, "_policy", policy)
    return policy


def _both_doors(base_url: str, raw: str, memory_id: str):
    with httpx.Client(base_url=f"{base_url}/api/v1", headers=bearer(raw), timeout=60) as api:
        rest = api.get(f"/memories/{memory_id}/"), api.get("/memories/")

    async def scenario():
        async with http_client(base_url, raw) as client:
            got = await client.call_tool("get_memory", {"memory_id": memory_id})
            found = await client.call_tool("memory_search", {"query": "doors"})
            return got, found

    return rest, run(scenario)


def test_rest_and_mcp_both_resolve_through_restrict(asgi_server, tokens, spy, embedding_model):  # noqa: F811
    memory = memory_create(namespace=tokens.alpha, content="Both doors see this.").memory
    (read, listed), (got, found) = _both_doors(asgi_server, tokens.alpha_rw, str(memory.id))
    assert read.status_code == 200 and listed.json()["count"] == 1
    assert not got.is_error and structured(got)["id"] == str(memory.id)
    assert not found.is_error
    assert ("ApiToken", "view") in spy.calls
    rest_calls = len(spy.calls)

    spy.deny = True
    (read, listed), (got, found) = _both_doors(asgi_server, tokens.alpha_rw, str(memory.id))
    assert len(spy.calls) > rest_calls
    assert read.status_code == 404 and listed.json()["count"] == 0
    assert got.is_error and "does not exist" in text_of(got)
    assert found.is_error and "namespace" in text_of(found).lower()
