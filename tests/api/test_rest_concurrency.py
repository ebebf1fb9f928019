"""Clients writing at once: the same content is stored once (every client gets its id); racing
changes of one memory all stay, or the client is told (412 on a stale If-Match)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import httpx

from apps.history.models import TrashEntry
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


# --- lost updates and resurrection (racing writes to one memory) ------------------------------


def _race(auth: dict, *requests: tuple[str, str, dict | None]) -> list[httpx.Response]:
    """Send the (method, url, json) requests at the same moment; their responses in order."""
    barrier = threading.Barrier(len(requests))

    def go(request):
        method, url, body = request
        barrier.wait()
        return httpx.request(method, url, json=body, headers=auth, timeout=60)

    with ThreadPoolExecutor(max_workers=len(requests)) as pool:
        return list(pool.map(go, requests))


def _new_memory(api, auth, text: str) -> str:
    created = api.post("/memories/", json={"content": text}, headers=auth)
    assert created.status_code == 201, created.text
    return created.json()["memory"]["id"]


def test_two_patches_of_different_fields_at_once_both_stay(asgi_server, api, tokens):
    auth = bearer(tokens.alpha_rw)
    for trial in range(6):
        pk = _new_memory(api, auth, f"Race trial {trial}: the backup runs at night.")
        url = f"{asgi_server}/api/v1/memories/{pk}/"
        title, importance = _race(
            auth, ("PATCH", url, {"title": f"T{trial}"}), ("PATCH", url, {"importance": 0.9})
        )
        assert title.status_code == importance.status_code == 200
        stored = Memory.objects.get(pk=pk)
        assert (stored.title, stored.importance) == (f"T{trial}", 0.9)
        assert stored.version == 3
        # The history shows each change once, as stored.
        revisions = api.get(f"/memories/{pk}/revisions/", headers=auth).json()["results"]
        changed = sorted(k for r in revisions if r["action"] == "update" for k in r["after"])
        assert changed == ["importance", "title"]
        assert_history_matches(api, auth, stored)


def test_a_patch_racing_a_delete_never_brings_the_memory_back(asgi_server, api, tokens):
    auth = bearer(tokens.alpha_rw)
    for trial in range(6):
        pk = _new_memory(api, auth, f"Delete race {trial}: the cache is warmed at boot.")
        url = f"{asgi_server}/api/v1/memories/{pk}/"
        patched, deleted = _race(
            auth, ("PATCH", url, {"title": "late edit"}), ("DELETE", url, None)
        )
        assert deleted.status_code == 204
        assert patched.status_code in (200, 404)
        assert not Memory.objects.filter(pk=pk).exists()
        entry = TrashEntry.objects.get(memory_id=pk)
        # What the trash keeps is what was stored last: an acknowledged edit is in it.
        assert entry.snapshot["title"] == ("late edit" if patched.status_code == 200 else "")
        restored = api.post(f"/trash/{entry.pk}/restore/", headers=auth)
        assert restored.status_code == 200, restored.text


def test_a_restore_racing_a_patch_keeps_both_in_order(asgi_server, api, tokens):
    auth = bearer(tokens.alpha_rw)
    for trial in range(6):
        pk = _new_memory(api, auth, f"Restore race {trial}: tokens expire after a day.")
        api.patch(f"/memories/{pk}/", json={"title": "first"}, headers=auth)
        first = api.get(f"/memories/{pk}/revisions/", headers=auth).json()["results"][0]["id"]
        api.patch(f"/memories/{pk}/", json={"title": "second"}, headers=auth)
        restore_url = f"{asgi_server}/api/v1/memories/{pk}/revisions/{first}/restore/"
        patch_url = f"{asgi_server}/api/v1/memories/{pk}/"
        restored, patched = _race(
            auth, ("POST", restore_url, None), ("PATCH", patch_url, {"importance": 0.8})
        )
        assert restored.status_code == patched.status_code == 200
        stored = Memory.objects.get(pk=pk)
        # One after the other, in either order: the restore's title always stays; the
        # importance is the patch's unless the restore (of the whole version) came second.
        assert stored.title == "first"
        assert_history_matches(api, auth, stored)


def assert_history_matches(api, auth, stored: Memory) -> None:
    """The newest revision touching each field holds the value stored now."""
    revisions = api.get(f"/memories/{stored.pk}/revisions/", headers=auth).json()["results"]
    last = {}
    for revision in reversed(revisions):  # oldest first
        last.update(revision["after"] or {})
    assert last["title"] == stored.title
    assert last.get("importance", 0.5) == stored.importance


def test_if_match_refuses_a_stale_version_with_412(api, tokens):
    auth = bearer(tokens.alpha_rw)
    pk = _new_memory(api, auth, "Versioned: the queue drains every minute.")
    read = api.get(f"/memories/{pk}/", headers=auth)
    assert read.headers["ETag"] == '"1"' and read.json()["version"] == 1
    ok = api.patch(f"/memories/{pk}/", json={"tier": "core"}, headers={**auth, "If-Match": '"1"'})
    assert ok.status_code == 200 and ok.headers["ETag"] == '"2"'
    stale = api.patch(
        f"/memories/{pk}/", json={"title": "old view"}, headers={**auth, "If-Match": '"1"'}
    )
    assert stale.status_code == 412
    assert stale.headers["ETag"] == '"2"' and stale.json()["version"] == 2
    assert Memory.objects.get(pk=pk).title == ""
    gone = api.delete(f"/memories/{pk}/", headers={**auth, "If-Match": '"1"'})
    assert gone.status_code == 412 and Memory.objects.filter(pk=pk).exists()
    assert api.delete(f"/memories/{pk}/", headers={**auth, "If-Match": '"2"'}).status_code == 204


def test_if_match_compares_strongly_so_a_weak_tag_is_refused(api, tokens):
    """RFC 9110 13.1.1: If-Match uses the strong comparison, under which a weak tag never
    matches, even one naming the current version."""
    auth = bearer(tokens.alpha_rw)
    pk = _new_memory(api, auth, "Strong tags: the backup runs at night.")
    for sent in ['W/"1"', 'w/"1"', "1", '"1', '"0x1"']:
        refused = api.patch(
            f"/memories/{pk}/", json={"title": "weakly matched"}, headers={**auth, "If-Match": sent}
        )
        assert refused.status_code == 412, sent
        assert "If-Match" in refused.json()["detail"], sent
    weak = api.delete(f"/memories/{pk}/", headers={**auth, "If-Match": 'W/"1"'})
    assert weak.status_code == 412 and "weak entity tag" in weak.json()["detail"]
    stored = Memory.objects.get(pk=pk)
    assert stored.title == "" and stored.version == 1
    ok = api.patch(
        f"/memories/{pk}/", json={"title": "strong"}, headers={**auth, "If-Match": '"1"'}
    )
    assert ok.status_code == 200 and ok.headers["ETag"] == '"2"'
