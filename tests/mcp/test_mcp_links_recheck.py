"""Links at write time and re-check marks over MCP (issue 44): remember takes caused_by and
depends_on, says what it linked, refuses an id of another namespace naming the field, and
memory_search shows a memory whose basis changed, in its text and structured output."""

from __future__ import annotations

from apps.memories.models import CausalEdge, Memory, Relation
from apps.memories.services import memory_create

from .client import http_client, run, structured, text_of


def test_remember_links_and_search_shows_the_changed_basis(asgi_server, tokens, embedding_model):
    elsewhere = memory_create(namespace=tokens.beta, content="Beta's own staging fact.").memory

    async def scenario():
        async with http_client(asgi_server, tokens.alpha_rw) as client:
            fact = await client.call_tool(
                "remember", {"content": "The staging database is Postgres 14."}
            )
            fact_id = structured(fact)["id"]
            step = await client.call_tool(
                "remember",
                {
                    "content": "Runbook: install the pg14 extension list on staging.",
                    "depends_on": [fact_id],
                    "caused_by": [fact_id],
                },
            )
            bad = await client.call_tool(
                "remember", {"content": "Rests on beta.", "depends_on": [str(elsewhere.pk)]}
            )
            await client.call_tool(
                "update_memory", {"memory_id": fact_id, "content": "Staging is Postgres 16."}
            )
            found = await client.call_tool(
                "memory_search", {"query": "pg14 extension list runbook staging"}
            )
            read = await client.call_tool("get_memory", {"memory_id": structured(step)["id"]})
            return fact_id, step, bad, found, read

    fact_id, step, bad, found, read = run(scenario)
    step_id = structured(step)["id"]
    assert structured(step)["depends_on"] == [fact_id]
    assert structured(step)["caused_by"] == [fact_id]
    assert "Depends on" in text_of(step) and "Caused by" in text_of(step)
    assert CausalEdge.objects.filter(
        source_id=step_id, target_id=fact_id, relation=Relation.DEPENDS_ON
    ).exists()
    assert bad.is_error and "depends_on[0]" in text_of(bad)
    assert not Memory.objects.filter(content="Rests on beta.").exists()
    hit = next(m for m in structured(found)["memories"] if m["id"] == step_id)
    assert hit["basis_changed"]["basis"] == fact_id
    assert hit["basis_changed"]["reason"] == "edited"
    assert "its basis changed on" in text_of(found)
    assert [m["basis"] for m in structured(read)["needs_recheck"]] == [fact_id]
    assert "Re-check" in text_of(read)
