"""Hostile input through every door, over real HTTP: REST and MCP never answer 5xx; a refusal
is a 4xx that names the offending field; a refused write stores nothing.

Hypothesis generates the values (strategies.py); HOSTILE_MAX_EXAMPLES raises the number of
examples per test for a long local run (docs/hardening.md records one) and HOSTILE_SECONDS
bounds the time each property may spend. The tally of statuses is printed at the end of each
test (`pytest -s` shows it).
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apps.memories.fields import CREATE_FIELDS, UPDATE_FIELDS
from apps.memories.models import Memory

from .strategies import any_date, any_json, any_text, any_time_expr, any_value

MAX_EXAMPLES = int(os.environ.get("HOSTILE_MAX_EXAMPLES", "25"))
HYPOTHESIS = settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    database=None,
    derandomize=os.environ.get("HOSTILE_RANDOM", "") == "",
    suppress_health_check=list(HealthCheck),
)
CREATE_NAMES = [f.name for f in CREATE_FIELDS]
UPDATE_NAMES = [f.name for f in UPDATE_FIELDS]
STATUSES: Counter[int] = Counter()
STARTED = time.monotonic()
# Time bound per property for long local runs: once spent, the remaining examples send nothing.
SECONDS = float(os.environ.get("HOSTILE_SECONDS", "inf"))
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


@pytest.fixture
def door(asgi_server, tokens, settings):
    """An httpx client with a read-write token for alpha; rate limits out of the way."""
    settings.API_RATE_LIMIT = "1000000/minute"
    headers = {"Authorization": f"Bearer {tokens.alpha_rw}"}
    with httpx.Client(base_url=asgi_server, headers=headers, timeout=120) as client:
        client.deadline = time.monotonic() + SECONDS
        yield client
    print(
        f"\nhostile statuses so far: {dict(sorted(STATUSES.items()))}, "
        f"{sum(STATUSES.values())} responses in {time.monotonic() - STARTED:.0f} s"
    )


def _send(client: httpx.Client, method: str, path: str, body) -> httpx.Response:
    raw = json.dumps(body, allow_nan=True).encode()  # NaN/Infinity tokens sent as they are
    response = client.request(
        method, path, content=raw, headers={"Content-Type": "application/json"}
    )
    STATUSES[response.status_code] += 1
    return response


def _assert_named(response: httpx.Response, body: dict) -> None:
    """A 4xx whose errors name a field of the body (or the body itself)."""
    assert response.status_code < 500, response.text[:500]
    if response.status_code == 400:
        payload = response.json()
        assert payload["detail"]
        named = set(payload.get("errors", {}))
        if not named:  # the body itself is not valid JSON (NaN, Infinity): said so
            assert "JSON" in payload["detail"], payload
            return
        roots = {k.split(".")[0].split("[")[0] for k in named}
        assert roots & (set(body) | {"non_field_errors", "items"}), (named, list(body))


def _row(memory: Memory) -> dict:
    """The stored row with its tags, to compare before and after a refused change."""
    row = Memory.objects.filter(pk=memory.pk).values().get()
    row["tags"] = sorted(memory.tags.values_list("name", flat=True))
    return row


def _mcp(client: httpx.Client, tool: str, arguments) -> tuple[bool, str]:
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }
    raw = json.dumps(message, allow_nan=True).encode()
    response = client.post(
        "/mcp", content=raw, headers={**MCP_HEADERS, "Content-Type": "application/json"}
    )
    STATUSES[response.status_code] += 1
    assert response.status_code < 500, response.text[:500]
    payload = response.json()
    if "error" in payload:  # a JSON-RPC level refusal (unparseable params)
        return True, json.dumps(payload["error"])
    result = payload["result"]
    text = " ".join(block.get("text", "") for block in result.get("content", []))
    return bool(result.get("isError")), text


@given(field=st.sampled_from([*CREATE_NAMES, "colour", "namespace"]), value=any_value)
@HYPOTHESIS
def test_rest_create_with_one_hostile_field(door, field, value):
    if time.monotonic() > door.deadline:
        return
    before = Memory.objects.count()
    body = {"content": "hostile create probe", field: value}
    response = _send(door, "POST", "/api/v1/memories/", body)
    _assert_named(response, body)
    if response.status_code >= 400:
        assert Memory.objects.count() == before


@given(items=st.lists(st.dictionaries(st.sampled_from(CREATE_NAMES), any_value), max_size=3))
@HYPOTHESIS
def test_rest_batch_with_hostile_items(door, items):
    if time.monotonic() > door.deadline:
        return
    before = Memory.objects.count()
    body = {"items": [{"content": f"batch probe {i}", **item} for i, item in enumerate(items)]}
    response = _send(door, "POST", "/api/v1/memories/batch/", body)
    _assert_named(response, body)
    if response.status_code >= 400:
        assert Memory.objects.count() == before


@given(field=st.sampled_from([*UPDATE_NAMES, "archived", "namespace"]), value=any_value)
@HYPOTHESIS
def test_rest_update_with_one_hostile_field(door, tokens, field, value):
    if time.monotonic() > door.deadline:
        return
    memory, _ = Memory.objects.get_or_create(
        namespace=tokens.alpha,
        content_hash="f" * 64,
        defaults={"content": "the memory hostile updates aim at", "title": "target"},
    )
    before = _row(memory)
    body = {field: value}
    response = _send(door, "PATCH", f"/api/v1/memories/{memory.pk}/", body)
    _assert_named(response, body)
    if response.status_code >= 400:
        assert _row(memory) == before  # nothing written (earlier examples may have changed it)


@given(
    query=any_text,
    time_expr=st.one_of(st.none(), any_time_expr),
    after=st.one_of(st.none(), any_date),
    before=st.one_of(st.none(), any_date),
)
@HYPOTHESIS
def test_rest_search_with_hostile_times(door, query, time_expr, after, before):
    if time.monotonic() > door.deadline:
        return
    body = {"query": query or "anything"}
    for name, value in (("time_expr", time_expr), ("after", after), ("before", before)):
        if value is not None:
            body[name] = value
    _assert_named(_send(door, "POST", "/api/v1/search/", body), body)


@given(after=any_date, before=any_date, tags=any_text)
@HYPOTHESIS
def test_rest_list_filters(door, after, before, tags):
    if time.monotonic() > door.deadline:
        return
    params = {"after": str(after), "before": str(before), "tags": tags}
    params = {
        k: v.replace("\x00", "").encode("utf-8", "replace").decode() for k, v in params.items()
    }
    response = door.get("/api/v1/memories/", params=params)
    STATUSES[response.status_code] += 1
    assert response.status_code < 500, response.text[:300]


@given(field=st.sampled_from([*CREATE_NAMES, "colour"]), value=any_value)
@HYPOTHESIS
def test_mcp_remember_with_one_hostile_field(door, field, value):
    if time.monotonic() > door.deadline:
        return
    before = Memory.objects.count()
    refused, text = _mcp(door, "remember", {"content": "hostile mcp probe", field: value})
    if refused:
        # A lone surrogate is refused by the JSON-RPC layer itself ("Parse error").
        assert any(word in text for word in (field, "content", "Parse error")), text[:300]
        assert Memory.objects.count() == before


@given(query=any_text, time_expr=any_time_expr, after=st.one_of(st.none(), any_date))
@HYPOTHESIS
def test_mcp_search_with_hostile_times(door, query, time_expr, after):
    if time.monotonic() > door.deadline:
        return
    arguments = {"query": query, "time_expr": time_expr}
    if after is not None:
        arguments["after"] = after
    refused, text = _mcp(door, "memory_search", arguments)
    if refused:
        # A tool error must be a refusal naming the argument, not an exception that escaped.
        named = ("query", "time_expr", "after", "before", "Parse error")
        assert any(word in text for word in named), text[:300]


@given(metadata=any_json)
@HYPOTHESIS
def test_mcp_update_with_hostile_metadata(door, tokens, metadata):
    if time.monotonic() > door.deadline:
        return
    memory, _ = Memory.objects.get_or_create(
        namespace=tokens.alpha,
        content_hash="e" * 64,
        defaults={"content": "the memory hostile metadata aims at"},
    )
    before = _row(memory)
    refused, text = _mcp(door, "update_memory", {"memory_id": str(memory.pk), "metadata": metadata})
    if refused:
        assert "metadata" in text or "Parse error" in text, text[:300]
        assert _row(memory) == before


RAW_BODIES = [
    b'{"content": "x", "metadata": {"a": 1e999}}',
    b'{"content": "x", "importance": 1e999}',
    b'{"content": "x", "metadata": {"a": NaN}}',
    b'{"content": "x\\u0000"}',
    b'{"content": "\\ud800"}',
    b'{"content": "x", "metadata": {"\\u0000": 1}}',
    b'{"content": "x", "metadata": ' + b"[" * 5000 + b"]" * 5000 + b"}",
    b'{"content": "x", "created_at": "9999-12-31T23:59:59-14:00"}',
    b'{"content": "x", "tags": ["ok", "\\ud83d"]}',
    b"[1, 2, 3]",
    b'"just a string"',
    b"not json at all",
    b"\xff\xfe\x00garbage",
    b"",
]


@pytest.mark.parametrize("raw", RAW_BODIES, ids=range(len(RAW_BODIES)))
def test_rest_raw_bodies(door, raw):
    before = Memory.objects.count()
    response = door.post(
        "/api/v1/memories/", content=raw, headers={"Content-Type": "application/json"}
    )
    STATUSES[response.status_code] += 1
    assert 400 <= response.status_code < 500, response.text[:300]
    assert response.json()["detail"]
    assert Memory.objects.count() == before


@pytest.mark.parametrize("raw", RAW_BODIES[:9], ids=range(9))
def test_mcp_raw_arguments(door, raw):
    before = Memory.objects.count()
    message = (
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": '
        b'{"name": "remember", "arguments": ' + raw + b"}}"
    )
    response = door.post(
        "/mcp", content=message, headers={**MCP_HEADERS, "Content-Type": "application/json"}
    )
    STATUSES[response.status_code] += 1
    assert response.status_code < 500, response.text[:300]
    assert Memory.objects.count() == before
