"""MCP refuses what cannot be stored or read back, naming the argument, and writes nothing."""

from __future__ import annotations

import pytest

from apps.memories.models import Memory

from .client import http_client, run, text_of

DEEP: list = [1]
for _ in range(40):
    DEEP = [DEEP]


def _call(asgi_server, raw_token, tool, arguments):
    async def scenario():
        async with http_client(asgi_server, raw_token) as client:
            return await client.call_tool(tool, arguments)

    return run(scenario)


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"content": "poison", "created_at": "9999-12-31T23:59:59-14:00"}, "created_at"),
        ({"content": "old", "created_at": "1066-10-14"}, "created_at"),
        ({"content": "typo", "colour": "red"}, "colour"),
        ({"content": "nul \x00 inside"}, "content"),
        ({"content": "x", "metadata": {"k\x00": 1}}, "metadata"),
        ({"content": "x", "metadata": {"deep": DEEP}}, "metadata"),
    ],
)
def test_remember_refuses_unstorable_values(asgi_server, tokens, arguments, field):
    result = _call(asgi_server, tokens.alpha_rw, "remember", arguments)
    assert result.is_error
    assert field in text_of(result)
    assert not Memory.objects.exists()


def test_remember_batch_names_the_item(asgi_server, tokens):
    items = [{"content": "fine"}, {"content": "bad", "created_at": "9999-12-31"}]
    result = _call(asgi_server, tokens.alpha_rw, "remember_batch", {"items": items})
    assert result.is_error
    assert "items[1].created_at" in text_of(result)
    assert not Memory.objects.exists()


def test_remember_batch_is_bounded_by_its_total_characters(asgi_server, tokens, settings):
    settings.MEMORY_BATCH_MAX_CHARS = 1_000
    items = [{"content": f"{i} " + "words of a long batch " * 10} for i in range(5)]
    result = _call(asgi_server, tokens.alpha_rw, "remember_batch", {"items": items})
    assert result.is_error
    assert "items" in text_of(result) and "limit per request is 1000" in text_of(result)
    assert not Memory.objects.exists()


def test_update_memory_refuses_a_field_it_cannot_change(asgi_server, tokens):
    stored = _call(asgi_server, tokens.alpha_rw, "remember", {"content": "stays put"})
    memory_id = stored.structured_content["id"]
    result = _call(
        asgi_server,
        tokens.alpha_rw,
        "update_memory",
        {"memory_id": memory_id, "namespace": "beta"},
    )
    assert result.is_error
    assert "namespace" in text_of(result)
    assert Memory.objects.get(pk=memory_id).namespace == tokens.alpha


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("remember", {"content": "typo", "colour": "red"}, "colour: Unknown field."),
        ("remember", {"content": 5}, "content: Not a valid string."),
        ("remember", {}, "content: This field is required."),
        (
            "memory_search",
            {"query": "x", "limit": 0},
            "limit: Ensure this value is greater than or equal to 1.",
        ),
        (
            "remember_batch",
            {"items": [{"content": "fine"}, {"content": "x", "colour": 1}]},
            "items[1].colour: Unknown field.",
        ),
    ],
)
def test_argument_errors_read_like_rest_errors(asgi_server, tokens, tool, arguments, message):
    """The words REST uses for the same mistake, without pydantic's report and its link."""
    result = _call(asgi_server, tokens.alpha_rw, tool, arguments)
    assert result.is_error
    assert text_of(result) == f"Error executing tool {tool}: Invalid arguments: {message}"
    assert "pydantic" not in text_of(result)
    assert not Memory.objects.exists()
