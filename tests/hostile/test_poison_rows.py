"""Rows already odd in the database (inserted by SQL) never make a list, search or read fail:
REST list/get/search and MCP search/list/get answer, and show the row, over real HTTP.
The browser pages and the admin are checked in tests/ui/test_browser_poison_rows.py."""

from __future__ import annotations

import json

import httpx
import pytest

from apps.memories.models import Memory
from tests.mcp.client import http_client, run, structured

from .poison import POISON, insert_poison_rows


@pytest.fixture
def poisoned(tokens, embedding_model):
    """alpha with one ordinary memory and every kind of poison row."""
    from apps.memories import services

    services.memory_create(namespace=tokens.alpha, content="An ordinary poison row neighbour")
    return insert_poison_rows(tokens.alpha)


@pytest.fixture
def rest(asgi_server, tokens, settings):
    settings.API_RATE_LIMIT = "1000000/minute"
    headers = {"Authorization": f"Bearer {tokens.alpha_rw}"}
    with httpx.Client(base_url=f"{asgi_server}/api/v1", headers=headers, timeout=120) as client:
        yield client


def _ok(response: httpx.Response) -> dict:
    assert response.status_code == 200, response.text[:300]
    return json.loads(response.text)  # strict JSON: no NaN or Infinity slipped through


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"category": "note"},
        {"tags": "x"},
        {"after": "1900-01-01", "before": "2200-12-31"},
        {"limit": 1, "offset": 5},
    ],
)
def test_rest_lists_every_poison_row(rest, poisoned, params):
    seen, page = set(), f"/memories/?{httpx.QueryParams({'limit': 100, **params})}"
    while page:
        body = _ok(rest.get(page))
        seen |= {m["title"] for m in body["results"]}
        page = body.get("next") if params.get("limit") != 1 else None
    if not params.get("limit") and "after" not in params and "tags" not in params:
        assert set(POISON) <= seen


def test_rest_reads_each_poison_row_with_clamped_values(rest, poisoned):
    for name, memory_id in poisoned.items():
        body = _ok(rest.get(f"/memories/{memory_id}/"))
        assert body["title"] == name
    infinity = _ok(rest.get(f"/memories/{poisoned['created_infinity']}/"))
    assert infinity["created_at"].startswith("2200-12-31")  # the nearest supported instant
    before_christ = _ok(rest.get(f"/memories/{poisoned['created_bc']}/"))
    assert before_christ["created_at"].startswith("1900-01-01")
    deep = _ok(rest.get(f"/memories/{poisoned['metadata_too_deep']}/"))
    assert "unreadable" in deep["metadata"]
    assert Memory.objects.filter(title="created_infinity").exists()  # the row itself is kept


@pytest.mark.parametrize(
    "body",
    [
        {"query": "poison row"},
        {"query": "poison row huge text", "mode": "semantic"},
        {"query": "poison row", "mode": "exact", "limit": 50},
        {"query": "what was stored last week about the poison row"},
        {"query": "poison row", "after": "1900-01-01", "before": "2200-12-31T23:59:59Z"},
    ],
)
def test_rest_search_meets_poison_rows(rest, poisoned, body):
    found = _ok(rest.post("/search/", json=body))
    assert found["query_log_id"]


def test_rest_updates_a_poison_row_through_the_write_path(rest, poisoned):
    response = rest.patch(
        f"/memories/{poisoned['metadata_list']}/", json={"title": "metadata list, renamed"}
    )
    assert response.status_code == 200, response.text[:300]


def test_mcp_search_list_and_get_meet_poison_rows(asgi_server, tokens, poisoned):
    async def scenario():
        async with http_client(asgi_server, tokens.alpha_rw) as client:
            results = [
                await client.call_tool("memory_search", {"query": "poison row", "limit": 50}),
                await client.call_tool(
                    "recall_by_timeframe",
                    {"start_date": "1900-01-01", "end_date": "2200-12-31", "n_results": 50},
                ),
                await client.call_tool("exact_match_retrieve", {"content": "poison row"}),
            ]
            for memory_id in poisoned.values():
                results.append(await client.call_tool("get_memory", {"memory_id": memory_id}))
                results.append(await client.call_tool("memory_history", {"memory_id": memory_id}))
            return results

    results = run(scenario)
    for result in results:
        assert not result.is_error, result.content[0].text[:300]
    found = {m["title"] for m in structured(results[0])["memories"]}
    assert len(found & set(POISON)) >= 10


def test_why_chains_through_poison_rows(asgi_server, tokens, poisoned):
    """Causal links between odd rows: memory_why and a why-question still answer, and every
    step of the chain has a readable title."""
    from apps.memories import services

    rows = [Memory.objects.get(pk=memory_id) for memory_id in poisoned.values()]
    for cause, effect in zip(rows, rows[1:], strict=False):
        services.edge_create(source=cause, target=effect, relation="caused")

    async def scenario():
        async with http_client(asgi_server, tokens.alpha_rw) as client:
            results = [await client.call_tool("memory_search", {"query": "why poison row"})]
            for memory_id in poisoned.values():
                results.append(await client.call_tool("memory_why", {"memory_id": memory_id}))
            return results

    results = run(scenario)
    for result in results:
        assert not result.is_error, result.content[0].text[:300]
    chains = [structured(r)["path"] for r in results]
    assert any(chains)
    assert all(isinstance(step["title"], str) and step["title"] for c in chains for step in c)
