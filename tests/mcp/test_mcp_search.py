"""memory_search over MCP finds what remember stored; the six older names map onto it as
SPEC section 5 lists; feedback reaches the search's log."""

from __future__ import annotations

import pytest

from apps.memories.services import memory_create
from apps.search.models import QueryLog

from .client import http_client, run, structured, text_of

FACTS = [
    ("The deploy script lives in scripts/deploy.sh and needs AWS_PROFILE set.", "2024-01-10"),
    ("Redis is used as the Celery broker on port 6379.", "2024-03-05"),
    ("Never run migrations on Friday afternoons; rollbacks are slow.", "2024-03-20"),
    ("The search latency budget is 200 ms at p95.", "2024-06-01"),
]


@pytest.fixture
def stored(tokens, embedding_model, settings):
    settings.SEARCH_QUERYLOG_SYNC = True
    return [
        memory_create(namespace=tokens.alpha, content=text, created_at=f"{day}T12:00:00Z").memory
        for text, day in FACTS
    ]


def test_remember_then_memory_search_finds_it(asgi_server, tokens, embedding_model, settings):
    settings.SEARCH_QUERYLOG_SYNC = True

    async def scenario():
        async with http_client(asgi_server, tokens.alpha_rw) as client:
            stored = await client.call_tool(
                "remember",
                {
                    "content": "The staging database password rotates every 30 days.",
                    "category": "fact",
                    "tags": ["security"],
                },
            )
            found = await client.call_tool(
                "memory_search", {"query": "how often does the staging password rotate?"}
            )
            feedback = await client.call_tool(
                "memory_feedback",
                {
                    "query_log_id": structured(found)["query_log_id"],
                    "was_useful": True,
                    "result_feedback": {structured(stored)["id"]: True},
                },
            )
            return stored, found, feedback

    stored, found, feedback = run(scenario)
    memory_id = structured(stored)["id"]
    result = structured(found)
    assert result["memories"][0]["id"] == memory_id
    assert result["mode"] == "hybrid" and result["total"] >= 1
    assert set(result["flags"]) >= {"evidence_gap", "fallback_retry", "contradictions"}
    assert 0.0 <= result["confidence"] <= 1.0
    text = text_of(found)
    assert "rotates every 30 days" in text
    assert not feedback.is_error, text_of(feedback)
    log = QueryLog.objects.get(pk=result["query_log_id"])
    assert log.was_useful is True and log.result_feedback == {memory_id: True}


def test_search_text_counts_in_words_and_quotes_an_untitled_turn(asgi_server, tokens, stored):
    """ "Found 1 memory", and each memory under a heading of ours ("### Memory 1", never an
    empty one) with its words quoted below: a turn's text is data, not a heading."""
    turn = memory_create(
        namespace=tokens.alpha,
        content="Caroline: I went to the LGBTQ support group yesterday and it was powerful.",
        category="conversation",
    ).memory

    async def scenario():
        async with http_client(asgi_server, tokens.alpha_rw) as client:
            one = await client.call_tool(
                "memory_search", {"query": "Caroline support group", "limit": 1}
            )
            many = await client.call_tool(
                "memory_search", {"query": "deploy redis migrations", "limit": 3}
            )
            read = await client.call_tool("get_memory", {"memory_id": str(turn.pk)})
            return one, many, read

    one, many, read = run(scenario)
    assert text_of(read).startswith(f"**Memory** `{turn.pk}`")
    assert "> Caroline: I went to the LGBTQ support group yesterday" in text_of(read)
    text = text_of(one)
    assert "Found 1 memory for: Caroline support group" in text
    assert "### Memory 1\n" in text
    assert "> Caroline: I went to the LGBTQ support group yesterday" in text
    assert "Found 3 memories for:" in text_of(many)
    headings = [line for line in text_of(many).splitlines() if line.startswith("### ")]
    assert headings == ["### Memory 1", "### Memory 2", "### Memory 3"]


def test_search_text_respects_the_token_budget(asgi_server, tokens, stored):
    async def scenario():
        async with http_client(asgi_server, tokens.alpha_rw) as client:
            wide = await client.call_tool("memory_search", {"query": "deploy redis migrations"})
            narrow = await client.call_tool(
                "memory_search", {"query": "deploy redis migrations", "token_budget": 60}
            )
            return wide, narrow

    wide, narrow = run(scenario)
    assert len(text_of(narrow)) < len(text_of(wide))
    assert structured(narrow)["total"] == structured(wide)["total"]


LEGACY = [
    (
        "retrieve_memory",
        {"query": "where is the deploy script", "n_results": 2},
        {"query": "where is the deploy script", "limit": 2},
    ),
    (
        "recall_memory",
        {"query": "celery broker", "time_expr": "in March 2024", "n_results": 3},
        {"query": "celery broker", "time_expr": "in March 2024", "limit": 3},
    ),
    (
        "recall_by_timeframe",
        {"start_date": "2024-03-01", "end_date": "2024-04-01", "n_results": 5},
        {"query": "", "after": "2024-03-01", "before": "2024-04-01", "limit": 5},
    ),
    (
        "retrieve_with_quality_boost",
        {"query": "latency budget", "quality_weight": 0.6, "n_results": 3},
        {"query": "latency budget", "mode": "hybrid", "quality_boost": 0.6, "limit": 3},
    ),
    (
        "exact_match_retrieve",
        {"content": "port 6379"},
        {"query": "port 6379", "mode": "exact", "limit": 10},
    ),
    (
        "debug_retrieve",
        {"query": "friday migrations", "n_results": 2},
        {"query": "friday migrations", "limit": 2, "include_debug": True},
    ),
]


@pytest.mark.parametrize(("old", "old_args", "new_args"), LEGACY, ids=[c[0] for c in LEGACY])
def test_old_names_map_onto_memory_search(asgi_server, tokens, stored, old, old_args, new_args):
    async def scenario():
        async with http_client(asgi_server, tokens.alpha_rw) as client:
            legacy = await client.call_tool(old, old_args)
            current = await client.call_tool("memory_search", new_args)
            return legacy, current

    legacy, current = run(scenario)
    assert not legacy.is_error, text_of(legacy)
    got, want = structured(legacy), structured(current)
    assert [m["id"] for m in got["memories"]] == [m["id"] for m in want["memories"]]
    assert got["mode"] == want["mode"] == new_args.get("mode", "hybrid")
    assert got["total"] <= new_args["limit"]
    assert ("debug" in got) == bool(new_args.get("include_debug"))
    old_log = QueryLog.objects.get(pk=got["query_log_id"])
    new_log = QueryLog.objects.get(pk=want["query_log_id"])
    assert old_log.filters == new_log.filters
    assert old_log.query == new_log.query


def test_old_names_find_the_right_memories(asgi_server, tokens, stored):
    async def scenario():
        async with http_client(asgi_server, tokens.alpha_rw) as client:
            window = await client.call_tool(
                "recall_by_timeframe", {"start_date": "2024-03-01", "end_date": "2024-04-01"}
            )
            exact = await client.call_tool("exact_match_retrieve", {"content": "port 6379"})
            debug = await client.call_tool("debug_retrieve", {"query": "deploy script"})
            return window, exact, debug

    window, exact, debug = run(scenario)
    march = {str(m.id) for m in stored[1:3]}
    assert {m["id"] for m in structured(window)["memories"]} == march
    assert [m["id"] for m in structured(exact)["memories"]] == [str(stored[1].id)]
    assert structured(debug)["debug"]
    assert structured(debug)["memories"][0]["id"] == str(stored[0].id)


def test_search_of_a_foreign_namespace_is_refused(asgi_server, tokens, stored):
    async def scenario():
        async with http_client(asgi_server, tokens.beta_rw) as client:
            own = await client.call_tool("memory_search", {"query": "deploy script"})
            foreign = await client.call_tool(
                "memory_search", {"query": "deploy script", "namespace": "alpha"}
            )
            old = await client.call_tool(
                "retrieve_memory", {"query": "deploy script", "namespace": "alpha"}
            )
            return own, foreign, old

    own, foreign, old = run(scenario)
    assert structured(own)["memories"] == []
    assert foreign.is_error and old.is_error
    assert "deploy.sh" not in text_of(foreign) + text_of(old)
