"""REST batch and MCP remember_batch forgive as imports do: a text said again at another time
or under another id is a memory of its own, an exact repeat is skipped and counted, and sending
the same batch again adds nothing and says so. Over real HTTP."""

from __future__ import annotations

from apps.memories.models import Memory
from tests.mcp.client import http_client, run, structured, text_of

from .live import bearer

THANKS = "Ana: Thanks, see you tomorrow!"
ITEMS = [
    {"content": THANKS, "created_at": "2023-05-08T12:01:00Z"},
    {"content": THANKS, "created_at": "2023-05-09T09:01:00Z"},  # another day
    {"content": THANKS, "created_at": "2023-05-09T09:01:00Z"},  # an exact repeat
    {"content": "Ben: Sure, noon at the usual place.", "created_at": "2023-05-09T09:00:00Z"},
]


def test_rest_batch_keeps_repeated_turns_and_a_second_send_adds_nothing(
    api, tokens, embedding_model
):
    auth = bearer(tokens.alpha_rw)
    first = api.post("/memories/batch/", json={"items": ITEMS}, headers=auth)
    assert first.status_code == 201, first.text
    assert (first.json()["created"], first.json()["already_stored"]) == (3, 1)
    ids = [r["memory"]["id"] for r in first.json()["results"]]
    assert ids[1] == ids[2] and len(set(ids)) == 3
    before = list(Memory.objects.filter(namespace=tokens.alpha).values_list("id", "updated_at"))

    again = api.post("/memories/batch/", json={"items": ITEMS}, headers=auth)
    assert again.status_code == 201
    assert (again.json()["created"], again.json()["already_stored"]) == (0, 4)
    assert [r["memory"]["id"] for r in again.json()["results"]] == ids
    after = list(Memory.objects.filter(namespace=tokens.alpha).values_list("id", "updated_at"))
    assert sorted(after) == sorted(before)


def test_mcp_remember_batch_keeps_repeated_turns_and_a_second_call_adds_nothing(
    asgi_server, tokens, embedding_model
):
    async def scenario():
        async with http_client(asgi_server, tokens.beta_rw) as client:
            first = await client.call_tool("remember_batch", {"items": ITEMS})
            again = await client.call_tool("remember_batch", {"items": ITEMS})
            return first, again

    first, again = run(scenario)
    assert not first.is_error, text_of(first)
    assert (structured(first)["created"], structured(first)["already_stored"]) == (3, 1)
    assert "3 new, 1 already stored" in text_of(first)
    assert (structured(again)["created"], structured(again)["already_stored"]) == (0, 4)
    assert "0 new, 4 already stored" in text_of(again)
    assert Memory.objects.filter(namespace=tokens.beta, content=THANKS).count() == 2
