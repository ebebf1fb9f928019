"""memory_search shows a why-question's chain; memory_why returns it directly, from a query
or a memory, and says "no causal link found" rather than inventing one."""

from __future__ import annotations

import pytest

from apps.memories.services import memory_create
from tests.factories import jenkins_chain

from .client import http_client, run, structured, text_of

CHAIN_LINE = "CI moved to GitHub Actions  <- caused by  Jenkins outage of 3 March"


@pytest.fixture
def chain(tokens, embedding_model):
    incident, decision = jenkins_chain(tokens.alpha)
    unlinked = memory_create(
        namespace=tokens.alpha, content="The team chose Svelte for the internal admin tool."
    ).memory
    return {"incident": incident, "decision": decision, "unlinked": unlinked}


def _calls(asgi_server, token, *calls):
    async def scenario():
        async with http_client(asgi_server, token) as client:
            return [await client.call_tool(name, args) for name, args in calls]

    return run(scenario)


def test_memory_search_text_shows_the_chain(asgi_server, tokens, chain):
    (found,) = _calls(
        asgi_server,
        tokens.alpha_rw,
        ("memory_search", {"query": "Why did we move CI off Jenkins?"}),
    )
    assert CHAIN_LINE in text_of(found)
    path = structured(found)["path"]
    assert [s["id"] for s in path] == [str(chain["decision"].pk), str(chain["incident"].pk)]


def test_memory_why_from_a_query_and_from_a_memory(asgi_server, tokens, chain):
    by_query, by_id, effect = _calls(
        asgi_server,
        tokens.alpha_rw,
        ("memory_why", {"query": "moving CI to GitHub Actions"}),
        ("memory_why", {"memory_id": str(chain["decision"].pk)}),
        ("memory_why", {"memory_id": str(chain["incident"].pk), "direction": "effect"}),
    )
    for result in (by_query, by_id):
        assert CHAIN_LINE in text_of(result)
        assert structured(result)["found"] is True
        assert structured(result)["path"][1]["relation"] == "caused"
    assert "Jenkins outage of 3 March  -> caused  CI moved to GitHub Actions" in text_of(effect)


def test_memory_why_says_when_no_link_exists(asgi_server, tokens, chain):
    by_query, by_id = _calls(
        asgi_server,
        tokens.alpha_rw,
        ("memory_why", {"query": "Why did we choose Svelte for the admin tool?"}),
        ("memory_why", {"memory_id": str(chain["unlinked"].pk)}),
    )
    for result in (by_query, by_id):
        assert text_of(result).startswith("No causal link found")
        assert structured(result) == {"direction": "cause", "path": [], "found": False}


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({}, "query"),
        ({"query": "  "}, "query"),
        ({"query": "ci", "memory_id": "00000000-0000-0000-0000-000000000000"}, "memory_id"),
        ({"memory_id": "not-a-uuid"}, "memory_id"),
        ({"query": "ci", "direction": "sideways"}, "direction"),
    ],
)
def test_memory_why_bad_arguments_name_the_field(asgi_server, tokens, args, field):
    (result,) = _calls(asgi_server, tokens.alpha_rw, ("memory_why", args))
    assert result.is_error
    assert field in text_of(result)


def test_memory_why_stays_in_the_tokens_namespaces(asgi_server, tokens, chain):
    (result,) = _calls(
        asgi_server, tokens.beta_rw, ("memory_why", {"memory_id": str(chain["decision"].pk)})
    )
    assert result.is_error and "does not exist" in text_of(result)
