"""Large batches are written in the background: REST answers 202 with a job to poll, MCP a job
id for batch_status; the job stores every item once, in one transaction, with the same results
a small batch answers at once. Over real HTTP, with the runner thread of the live server."""

from __future__ import annotations

import time

from apps.history.models import MemoryRevision
from apps.memories.models import Memory
from apps.transfer.models import BatchJob
from tests.mcp.client import http_client, run, structured, text_of

from .live import bearer

SIZE = 130  # more than MEMORY_BATCH_INLINE_MAX (100)


def _items(prefix: str, count: int = SIZE) -> list[dict]:
    return [
        {"content": f"{prefix} fact number {i}: the blue door is on floor {i}."}
        for i in range(count)
    ]


def _poll(api, url: str, auth: dict, timeout: float = 120) -> dict:
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        job = api.get(url, headers=auth)
        assert job.status_code == 200, job.text
        body = job.json()
        seen.append((body["state"], body["done"]))
        if body["state"] in ("done", "failed"):
            body["seen"] = seen
            return body
        time.sleep(0.2)
    raise AssertionError(f"the job did not finish: {seen[-5:]}")


def test_a_large_rest_batch_is_a_job_that_stores_every_item_once(api, tokens, embedding_model):
    auth = bearer(tokens.alpha_rw)
    answer = api.post("/memories/batch", json={"items": _items("Rest")}, headers=auth)
    assert answer.status_code == 202, answer.text
    job = answer.json()
    assert job["state"] in ("queued", "running") and job["total"] == SIZE
    assert answer.headers["Location"] == job["status_url"]

    done = _poll(api, job["status_url"], auth)
    assert done["state"] == "done", done
    assert (done["created"], done["already_stored"], done["done"]) == (SIZE, 0, SIZE)
    assert done["rate_per_s"] > 0
    ids = [r["id"] for r in done["results"]]
    stored = Memory.objects.filter(namespace=tokens.alpha, content__startswith="Rest fact")
    assert sorted(ids) == sorted(str(i) for i in stored.values_list("id", flat=True))
    assert stored.count() == SIZE
    revisions = MemoryRevision.objects.filter(memory_id__in=ids)
    assert set(revisions.values_list("door", flat=True)) == {"rest"}
    assert set(revisions.values_list("actor_label", flat=True)) == {
        "token a-rw (" + _prefix(tokens) + "…)"
    }

    # Sent again: a second job that stores nothing new and says so.
    again = api.post("/memories/batch", json={"items": _items("Rest")}, headers=auth)
    redone = _poll(api, again.json()["status_url"], auth)
    assert (redone["created"], redone["already_stored"]) == (0, SIZE)
    assert [r["id"] for r in redone["results"]] == ids
    assert stored.count() == SIZE


def _prefix(tokens) -> str:
    from apps.access.models import ApiToken

    return ApiToken.objects.get(name="a-rw").prefix


def test_a_bad_item_in_a_large_batch_is_refused_at_once_and_nothing_is_kept(
    api, tokens, embedding_model
):
    items = _items("Bad")
    items[117]["category"] = "gossip"
    answer = api.post("/memories/batch", json={"items": items}, headers=bearer(tokens.alpha_rw))
    assert answer.status_code == 400
    assert "items[117].category" in answer.text
    assert not BatchJob.objects.exists()
    assert not Memory.objects.filter(content__startswith="Bad fact").exists()


def test_small_batches_stay_inline_and_background_can_be_asked(api, tokens, embedding_model):
    auth = bearer(tokens.alpha_rw)
    inline = api.post("/memories/batch", json={"items": _items("Small", 3)}, headers=auth)
    assert inline.status_code == 201 and inline.json()["created"] == 3
    asked = api.post(
        "/memories/batch", json={"items": _items("Asked", 2), "background": True}, headers=auth
    )
    assert asked.status_code == 202
    assert _poll(api, asked.json()["status_url"], auth)["created"] == 2


def test_a_job_is_seen_only_through_its_namespace(api, tokens, embedding_model):
    answer = api.post(
        "/memories/batch",
        json={"items": _items("Private", 2), "background": True},
        headers=bearer(tokens.alpha_rw),
    )
    url = answer.json()["status_url"]
    assert api.get(url, headers=bearer(tokens.beta_rw)).status_code == 404
    assert api.get(url).status_code == 401
    assert api.get("/memories/batch/not-a-job", headers=bearer(tokens.alpha_rw)).status_code == 404
    assert _poll(api, url, bearer(tokens.alpha_ro))["state"] == "done"


def test_mcp_remember_batch_hands_back_a_job_that_batch_status_follows(
    asgi_server, tokens, embedding_model
):
    async def scenario():
        async with http_client(asgi_server, tokens.beta_rw) as client:
            queued = await client.call_tool("remember_batch", {"items": _items("Mcp")})
            job_id = structured(queued)["job_id"]
            for _ in range(600):
                status = await client.call_tool("batch_status", {"job_id": job_id})
                if structured(status)["state"] in ("done", "failed"):
                    return queued, status
                await _sleep(0.2)
            raise AssertionError("the job did not finish")

    queued, status = run(scenario)
    assert not queued.is_error, text_of(queued)
    assert "batch_status" in text_of(queued)
    assert structured(status)["state"] == "done", text_of(status)
    assert f"{SIZE} new, 0 already stored" in text_of(status)
    stored = Memory.objects.filter(namespace=tokens.beta, content__startswith="Mcp fact")
    assert stored.count() == SIZE
    assert set(
        MemoryRevision.objects.filter(memory_id__in=stored.values("id")).values_list(
            "door", flat=True
        )
    ) == {"mcp"}


async def _sleep(seconds: float) -> None:
    import asyncio

    await asyncio.sleep(seconds)
