"""Facts that change over MCP: remember names a possible update and says how to confirm it;
remember with supersedes replaces the old fact; memory_search as_of answers with the past."""

from __future__ import annotations

from apps.memories.models import Memory

from .client import http_client, run, structured, text_of


def test_possible_update_then_confirm_with_supersedes(asgi_server, tokens, embedding_model):
    async def scenario():
        async with http_client(asgi_server, tokens.alpha_rw) as client:
            old = await client.call_tool(
                "remember",
                {"content": "Alice leads the payments team.", "created_at": "2025-03-01"},
            )
            noticed = await client.call_tool(
                "remember",
                {
                    "content": "Bob took over the payments team from Alice.",
                    "created_at": "2025-06-01",
                },
            )
            old_id = structured(old)["id"]
            confirmed = await client.call_tool(
                "remember",
                {
                    "content": "Bob now leads payments; Alice moved to the platform team.",
                    "created_at": "2025-06-02",
                    "supersedes": [old_id],
                },
            )
            now = await client.call_tool("memory_search", {"query": "Who leads payments?"})
            then = await client.call_tool(
                "memory_search", {"query": "Who leads payments?", "as_of": "2025-04-01"}
            )
            bad = await client.call_tool(
                "memory_search", {"query": "Who leads payments?", "as_of": "April-ish"}
            )
            return old_id, noticed, confirmed, now, then, bad

    old_id, noticed, confirmed, now, then, bad = run(scenario)
    updates = structured(noticed)["possible_updates"]
    assert [u["id"] for u in updates] == [old_id]
    assert "supersedes" in text_of(noticed) and old_id in text_of(noticed)
    assert structured(confirmed)["supersedes"] == [old_id]
    assert Memory.objects.get(pk=old_id).valid_until is not None
    current = structured(now)["memories"]
    assert old_id not in [m["id"] for m in current]
    assert all(m["current"] for m in current)
    past = structured(then)["memories"]
    assert [m["id"] for m in past] == [old_id]  # nothing learnt after April
    assert bad.is_error and "as_of" in text_of(bad)


def test_remember_says_a_negated_rule_is_a_contradiction(asgi_server, tokens, embedding_model):
    async def scenario():
        async with http_client(asgi_server, tokens.alpha_rw) as client:
            rule = await client.call_tool(
                "remember", {"content": "Never commit API tokens to the repository."}
            )
            against = await client.call_tool(
                "remember", {"content": "Commit the API tokens to the repository."}
            )
            return rule, against

    rule, against = run(scenario)
    rule_id = structured(rule)["id"]
    assert structured(against)["possible_updates"] == []
    assert [c["id"] for c in structured(against)["possible_contradictions"]] == [rule_id]
    text = text_of(against)
    assert "Says the opposite of" in text and rule_id in text
    assert "supersedes=" not in text  # no invitation to replace the rule
