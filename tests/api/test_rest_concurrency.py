"""The same content sent by many clients at once is stored once; every client gets its id."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import httpx

from apps.memories.models import Memory

from .live import bearer


def test_twenty_identical_writes_at_once_store_one_memory(asgi_server, tokens):
    texts = [f"Concurrent duplicate number {i}: the deploy script needs sudo." for i in range(3)]

    def post(text: str) -> httpx.Response:
        return httpx.post(
            f"{asgi_server}/api/v1/memories/",
            json={"content": text},
            headers=bearer(tokens.alpha_rw),
            timeout=120,
        )

    with ThreadPoolExecutor(max_workers=20) as pool:
        responses = list(pool.map(post, [t for t in texts for _ in range(20)]))

    assert {r.status_code for r in responses} <= {200, 201}
    assert sorted(r.status_code for r in responses).count(201) == len(texts)
    assert Memory.objects.filter(namespace=tokens.alpha).count() == len(texts)
    for text in texts:
        ids = {r.json()["memory"]["id"] for r in responses if r.json()["memory"]["content"] == text}
        assert ids == {str(Memory.objects.get(content=text).id)}


def test_resending_archived_content_answers_with_the_archived_memory(api, tokens):
    first = api.post("/memories/", json={"content": "same words"}, headers=bearer(tokens.alpha_rw))
    first_id = first.json()["memory"]["id"]
    api.patch(f"/memories/{first_id}/", json={"archived": True}, headers=bearer(tokens.alpha_rw))
    again = api.post("/memories/", json={"content": "same words"}, headers=bearer(tokens.alpha_rw))
    assert again.status_code == 200  # the archived one is returned, not a second copy
    assert again.json()["memory"]["id"] == first_id


def test_restoring_a_copy_of_content_stored_meanwhile_is_refused(api, tokens):
    auth = bearer(tokens.alpha_rw)
    first = api.post("/memories/", json={"content": "said twice"}, headers=auth).json()
    first_id = first["memory"]["id"]
    api.patch(f"/memories/{first_id}/", json={"archived": True}, headers=auth)
    Memory.objects.filter(pk=first_id).update(content_hash="0" * 64)  # as if edited since
    second = api.post("/memories/", json={"content": "said twice"}, headers=auth)
    assert second.status_code == 201
    # An exact copy: the same text at the same time (a text said again at another time is a
    # memory of its own, and could come back).
    copy = Memory.objects.get(pk=second.json()["memory"]["id"])
    Memory.objects.filter(pk=first_id).update(
        content_hash=copy.content_hash, created_at=copy.created_at
    )
    restore = api.patch(f"/memories/{first_id}/", json={"archived": False}, headers=auth)
    assert restore.status_code == 400
    assert "content" in restore.json()["errors"]
