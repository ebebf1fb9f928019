"""An id never crosses a namespace (issue 42).

The attack: namespace alpha deletes a memory; namespace beta imports a record carrying that
memory's id, then reads alpha's history (REST, MCP, the history page), restores one of alpha's
versions into its own memory, and leaves alpha's trash restore failing. Now the import gives
every record whose uuid is not a memory of its own namespace a fresh id (the record's id kept
as external id), the same whether the id is free, live elsewhere or in a trash; and history,
restore, undo, trash and links are looked up by namespace and id, so even a row that already
shares an id with another namespace's history (written before this fix) sees only its own.
"""

from __future__ import annotations

import json
import time
import uuid
from io import StringIO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client

from apps.access.models import NamespaceMembership, Role
from apps.history.models import MemoryRevision, TrashEntry
from apps.history.purge import trash_purge
from apps.memories import services
from apps.memories.models import CausalEdge, Memory
from apps.transfer import import_runs
from apps.transfer.exporting import export_markdown_zip, export_records
from tests.mcp.client import http_client, run, structured, text_of
from tests.ui.conftest import PASSWORD, make_user

from ..api.live import bearer

pytestmark = pytest.mark.usefixtures("embedding_model")

SECRET = "Alpha's launch code is 4242"


def _store(api, token, content: str) -> str:
    response = api.post("/memories/", json={"content": content}, headers=bearer(token))
    assert response.status_code == 201, response.text
    return response.json()["memory"]["id"]


@pytest.fixture
def alpha_deleted(api, tokens) -> tuple[str, TrashEntry]:
    """A memory of alpha with two versions, deleted through REST: its id and trash entry."""
    memory_id = _store(api, tokens.alpha_rw, "Alpha's launch code is 0000")
    patched = api.patch(
        f"/memories/{memory_id}/", json={"content": SECRET}, headers=bearer(tokens.alpha_rw)
    )
    assert patched.status_code == 200
    assert api.delete(f"/memories/{memory_id}/", headers=bearer(tokens.alpha_rw)).status_code == 204
    return memory_id, TrashEntry.objects.get(memory_id=memory_id)


def _jsonl(path, records: list[dict]):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _import_cli(path, namespace: str, **options) -> str:
    out = StringIO()
    call_command(
        "import_memories", str(path), namespace=namespace, no_progress=True, stdout=out, **options
    )
    return out.getvalue()


def _client(username: str) -> Client:
    client = Client()
    assert client.login(username=username, password=PASSWORD)
    return client


def _member(username: str, namespace, role=Role.EDITOR) -> Client:
    NamespaceMembership.objects.create(user=make_user(username), namespace=namespace, role=role)
    return _client(username)


def _import_ui(client: Client, namespace: str, path, settings, tmp_path) -> dict:
    """Upload through the import page and wait for its background run to finish."""
    settings.IMPORT_DIR = tmp_path / "imports"
    upload = SimpleUploadedFile(path.name, path.read_bytes())
    response = client.post(f"/ns/{namespace}/transfer/import/", {"file": upload})
    assert response.status_code == 200, response.content[:500]
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        runs = [import_runs.load(p.stem) for p in settings.IMPORT_DIR.glob("*.json")]
        done = [r for r in runs if r and r["phase"] not in import_runs.RUNNING]
        if done:
            assert done[0]["phase"] == "done", done[0]
            for p in settings.IMPORT_DIR.glob("*.json"):
                p.unlink()
            return done[0]
        time.sleep(0.2)
    raise AssertionError("the import did not finish")


def test_beta_importing_alphas_deleted_id_learns_and_changes_nothing_of_alpha(
    api, asgi_server, tokens, alpha_deleted, tmp_path
):
    memory_id, entry = alpha_deleted
    alpha_revisions = list(
        MemoryRevision.objects.filter(memory_id=memory_id).values_list("pk", flat=True)
    )
    # REST and MCP writes take no id at all: the field is refused by name.
    beta = bearer(tokens.beta_rw)
    for path, body in [
        ("/memories/", {"id": memory_id, "content": "bait"}),
        ("/memories/batch/", {"items": [{"id": memory_id, "content": "bait"}]}),
    ]:
        refused = api.post(path, json=body, headers=beta)
        assert refused.status_code == 400 and "id" in refused.text, refused.text

    _import_cli(_jsonl(tmp_path / "bait.jsonl", [{"id": memory_id, "content": "bait"}]), "beta")
    bait = Memory.objects.get(namespace=tokens.beta, content="bait")
    assert str(bait.pk) != memory_id and bait.external_id == memory_id

    # REST: alpha's id is not found for beta, beta's memory has only its own history, and
    # none of alpha's revisions can be restored into it.
    foreign = api.get(f"/memories/{memory_id}/revisions/", headers=beta)
    assert foreign.status_code == 404 and "4242" not in foreign.text
    own = api.get(f"/memories/{bait.pk}/revisions/", headers=beta).json()
    assert [r["action"] for r in own["results"]] == ["create"]
    for revision in alpha_revisions:
        for pk in (memory_id, bait.pk):
            restore = api.post(f"/memories/{pk}/revisions/{revision}/restore/", headers=beta)
            assert restore.status_code == 404 and "4242" not in restore.text
    assert api.post(f"/trash/{entry.pk}/restore/", headers=beta).status_code == 404
    assert api.get("/trash/", headers=beta).json()["count"] == 0

    # MCP: memory_history of alpha's id fails for beta; of beta's memory shows beta's only.
    async def over_mcp():
        async with http_client(asgi_server, tokens.beta_rw) as client:
            theirs = await client.call_tool("memory_history", {"memory_id": memory_id})
            mine = await client.call_tool("memory_history", {"memory_id": str(bait.pk)})
            remembered = await client.call_tool("remember", {"id": memory_id, "content": "x"})
        return theirs, mine, remembered

    theirs, mine, remembered = run(over_mcp)
    assert remembered.is_error and not Memory.objects.filter(content="x").exists()
    assert theirs.is_error and "4242" not in text_of(theirs) and "0000" not in text_of(theirs)
    assert [r["action"] for r in structured(mine)["revisions"]] == ["create"]

    # The history page: alpha's id is not found, beta's page holds nothing of alpha.
    bea = _member("bea", tokens.beta)
    assert bea.get(f"/memories/{memory_id}/history/").status_code == 404
    page = bea.get(f"/memories/{bait.pk}/history/")
    assert page.status_code == 200 and b"4242" not in page.content
    for revision in alpha_revisions:
        url = f"/memories/{bait.pk}/revisions/{revision}/restore/"
        assert bea.post(url).status_code == 404
    assert Memory.objects.get(pk=bait.pk).content == "bait"

    # Alpha's trash restore still works, with the id and the content it had.
    back = api.post(f"/trash/{entry.pk}/restore/", headers=bearer(tokens.alpha_rw))
    assert back.status_code == 200, back.text
    assert back.json()["memory"]["id"] == memory_id
    assert back.json()["memory"]["content"] == SECRET
    history = api.get(f"/memories/{memory_id}/revisions/", headers=bearer(tokens.alpha_rw))
    assert [r["action"] for r in history.json()["results"]] == [
        "undelete",
        "delete",
        "update",
        "create",
    ]


@pytest.mark.parametrize("door", ["cli", "parallel", "ui", "markdown"])
def test_an_imported_id_gets_the_same_answer_whether_free_live_elsewhere_or_trashed(
    door, api, tokens, alpha_deleted, tmp_path, settings
):
    trashed, _ = alpha_deleted
    live = _store(api, tokens.alpha_rw, "Alpha's live memory")
    free = str(uuid.uuid4())
    records = [
        {"id": given, "namespace": "beta", "content": f"Beta's record {n}"}
        for n, given in enumerate([trashed, live, free])
    ]
    path = _jsonl(tmp_path / "ids.jsonl", records)
    if door == "markdown":  # the same records as memoryhub's markdown export writes them
        path = tmp_path / "ids.zip"
        path.write_bytes(b"".join(export_markdown_zip(records)))

    def run_import() -> str:
        if door == "ui":
            bea = _client("bea")
            state = _import_ui(bea, "beta", path, settings, tmp_path)
            return f"{state['created']} new, {state['skipped']} already stored"
        return _import_cli(path, "beta", workers=2 if door == "parallel" else 1)

    if door == "ui":
        _member("bea", tokens.beta)
    assert "3 new, 0 already stored" in run_import()
    stored = {m.external_id: m for m in Memory.objects.filter(namespace=tokens.beta)}
    assert set(stored) == {trashed, live, free}
    for given, memory in stored.items():
        assert str(memory.pk) != given  # a fresh id in every case: the answer tells nothing
        assert memory.content.startswith("Beta's record")
    # The same file again adds nothing; alpha's memories and trash are as they were.
    assert "0 new, 3 already stored" in run_import()
    assert Memory.objects.filter(namespace=tokens.beta).count() == 3
    assert Memory.objects.get(pk=live).namespace == tokens.alpha
    assert TrashEntry.objects.filter(memory_id=trashed, namespace=tokens.alpha).exists()


def test_a_namespace_reimporting_its_own_export_adds_nothing_and_keeps_its_ids(
    api, tokens, tmp_path
):
    first = _store(api, tokens.alpha_rw, "Alpha's first fact")
    second = _store(api, tokens.alpha_rw, "Alpha's second fact")
    assert api.post(
        "/edges/",
        json={"source": first, "target": second, "relation": "caused"},
        headers=bearer(tokens.alpha_rw),
    ).status_code in {200, 201}
    path = _jsonl(tmp_path / "alpha.jsonl", list(export_records(["alpha"])))
    assert "0 new, 2 already stored" in _import_cli(path, "alpha")
    assert {str(pk) for pk in Memory.objects.values_list("pk", flat=True)} == {first, second}
    assert CausalEdge.objects.count() == 1


def _legacy_shared_id(tokens, memory_id: str) -> Memory:
    """Beta's memory holding alpha's deleted id, as an import before this fix left it (the
    write service still takes an id; only an import reaches it, and it no longer passes one
    that is not already the namespace's own)."""
    [result] = services.memory_batch_create(
        namespace=tokens.beta, items=[{"id": memory_id, "content": "bait"}], door="cli"
    )
    assert str(result.memory.pk) == memory_id
    return result.memory


def test_a_row_already_sharing_an_id_sees_only_its_own_namespaces_history(
    api, asgi_server, tokens, alpha_deleted
):
    memory_id, _ = alpha_deleted
    alpha_revisions = list(
        MemoryRevision.objects.filter(memory_id=memory_id).values_list("pk", flat=True)
    )
    _legacy_shared_id(tokens, memory_id)
    beta = bearer(tokens.beta_rw)

    listed = api.get(f"/memories/{memory_id}/revisions/", headers=beta)
    assert listed.status_code == 200
    assert [r["action"] for r in listed.json()["results"]] == ["create"]
    assert "4242" not in listed.text and "0000" not in listed.text
    for revision in alpha_revisions:
        restore = api.post(f"/memories/{memory_id}/revisions/{revision}/restore/", headers=beta)
        assert restore.status_code == 404 and "4242" not in restore.text
    assert Memory.objects.get(pk=memory_id).content == "bait"

    async def over_mcp():
        async with http_client(asgi_server, tokens.beta_rw) as client:
            return await client.call_tool("memory_history", {"memory_id": memory_id})

    history = run(over_mcp)
    assert not history.is_error, text_of(history)
    assert [r["action"] for r in structured(history)["revisions"]] == ["create"]
    assert "4242" not in text_of(history)

    bea = _member("bea", tokens.beta)
    page = bea.get(f"/memories/{memory_id}/history/")
    assert page.status_code == 200
    assert b"4242" not in page.content and b"0000" not in page.content
    for revision in alpha_revisions:
        assert bea.post(f"/memories/{memory_id}/revisions/{revision}/restore/").status_code == 404
        assert bea.post(f"/memories/{memory_id}/revisions/{revision}/undo/").status_code == 404
    assert Memory.objects.get(pk=memory_id).content == "bait"


def test_merge_variation_beta_cannot_undo_alphas_merge(api, tokens, tmp_path):
    """Alpha merged a duplicate into a memory, then deleted it; beta's row with that id (old
    data) cannot take the merge back: alpha's duplicate stays merged, beta's memory unchanged."""
    keep = Memory.objects.get(pk=_store(api, tokens.alpha_rw, "Deploys run on Tuesdays"))
    duplicate = Memory.objects.get(pk=_store(api, tokens.alpha_rw, "Deploys go out on Tuesdays"))
    services.memories_merge(keep=keep, others=[duplicate], door="rest")
    merge = MemoryRevision.objects.get(memory_id=keep.pk, action="merge")
    assert api.delete(f"/memories/{keep.pk}/", headers=bearer(tokens.alpha_rw)).status_code == 204
    _legacy_shared_id(tokens, str(keep.pk))

    bea = _member("bea", tokens.beta)
    assert bea.post(f"/memories/{keep.pk}/revisions/{merge.pk}/undo/").status_code == 404
    assert b"Deploys" not in bea.get(f"/memories/{keep.pk}/history/").content
    duplicate.refresh_from_db()
    assert duplicate.archived and duplicate.namespace == tokens.alpha
    assert Memory.objects.get(pk=keep.pk).content == "bait"

    # Beta importing the duplicate's id gets a memory of its own; alpha's stays merged.
    _import_cli(_jsonl(tmp_path / "dup.jsonl", [{"id": str(duplicate.pk), "content": "x"}]), "beta")
    duplicate.refresh_from_db()
    assert duplicate.archived and duplicate.namespace == tokens.alpha


def test_link_variation_answers_alike_for_alphas_ids_and_free_ones(
    api, asgi_server, tokens, alpha_deleted
):
    trashed, _ = alpha_deleted
    live = _store(api, tokens.alpha_rw, "Alpha's linked fact")
    mine = _store(api, tokens.beta_rw, "Beta's own fact")
    free = str(uuid.uuid4())
    beta = bearer(tokens.beta_rw)

    def shape(response, other: str) -> tuple[int, str]:
        return response.status_code, response.text.replace(other, "ID")

    answers = set()
    for other in (live, trashed, free):
        for body in ({"source": mine, "target": other}, {"source": other, "target": mine}):
            response = api.post("/edges/", json={**body, "relation": "caused"}, headers=beta)
            assert response.status_code == 404, response.text
            answers.add(shape(response, other))
    assert len(answers) == 1  # the same answer whichever id, and whichever end

    async def over_mcp():
        texts = set()
        async with http_client(asgi_server, tokens.beta_rw) as client:
            for other in (live, trashed, free):
                linked = await client.call_tool(
                    "link_memories", {"source_id": mine, "target_id": other}
                )
                assert linked.is_error
                texts.add(text_of(linked).replace(other, "ID"))
        return texts

    assert len(run(over_mcp)) == 1

    bea = _member("bea", tokens.beta)
    pages = set()
    for other in (live, trashed, free):
        for direction in ("out", "in"):
            form = {"target": other, "relation": "caused", "direction": direction}
            response = bea.post(f"/memories/{mine}/link/", form)
            pages.add((response.status_code, response.content.replace(other.encode(), b"ID")))
        dragged = bea.post(
            "/ns/beta/graph/link/", {"source": mine, "target": other, "relation": "caused"}
        )
        assert dragged.status_code == 404 and dragged.json() == {
            "errors": {"target": ["No such memory in this namespace."]}
        }
    assert len(pages) == 1 and next(iter(pages))[0] == 404
    assert CausalEdge.objects.count() == 0
    assert not MemoryRevision.objects.filter(namespace=tokens.alpha, action="link").exists()


def test_trash_restore_variation_beta_cannot_restore_or_block_alphas_entry(
    api, tokens, alpha_deleted, tmp_path
):
    memory_id, entry = alpha_deleted
    beta = bearer(tokens.beta_rw)
    missing = api.post("/trash/999999/restore/", headers=beta)
    taken = api.post(f"/trash/{entry.pk}/restore/", headers=beta)
    assert taken.status_code == missing.status_code == 404
    assert taken.json()["detail"].replace(str(entry.pk), "N") == missing.json()["detail"].replace(
        "999999", "N"
    )
    bea = _member("bea", tokens.beta)
    assert bea.post(f"/ns/beta/trash/{entry.pk}/restore/").status_code == 404
    assert bea.post(f"/ns/alpha/trash/{entry.pk}/restore/").status_code == 404
    assert TrashEntry.objects.filter(pk=entry.pk).exists()

    # Beta imports the id twice over (the parallel door too): alpha's restore still works.
    bait = _jsonl(tmp_path / "bait.jsonl", [{"id": memory_id, "content": "bait"}])
    _import_cli(bait, "beta")
    _import_cli(bait, "beta", workers=2)
    assert Memory.objects.filter(namespace=tokens.beta).count() == 1
    ann = _member("ann", tokens.alpha)
    restored = ann.post(f"/ns/alpha/trash/{entry.pk}/restore/")
    assert restored.status_code == 302 and restored.url == f"/memories/{memory_id}/"
    assert Memory.objects.get(pk=memory_id).content == SECRET


def test_deleting_and_purging_a_row_sharing_an_id_leaves_alphas_trash_and_history(
    api, tokens, alpha_deleted
):
    memory_id, entry = alpha_deleted
    alpha_history = set(
        MemoryRevision.objects.filter(namespace=tokens.alpha).values_list("pk", flat=True)
    )
    _legacy_shared_id(tokens, memory_id)
    beta = bearer(tokens.beta_rw)
    assert api.delete(f"/memories/{memory_id}/", headers=beta).status_code == 204

    kept = TrashEntry.objects.get(pk=entry.pk)
    assert kept.namespace == tokens.alpha and kept.content == SECRET
    assert TrashEntry.objects.filter(memory_id=memory_id).count() == 2
    assert api.get("/trash/", headers=beta).json()["count"] == 1
    assert "4242" not in api.get("/trash/", headers=beta).text

    trash_purge(older_than_days=0, namespace=tokens.beta)
    assert TrashEntry.objects.filter(pk=entry.pk).exists()
    assert alpha_history <= set(MemoryRevision.objects.values_list("pk", flat=True))
    back = api.post(f"/trash/{entry.pk}/restore/", headers=bearer(tokens.alpha_rw))
    assert back.status_code == 200 and back.json()["memory"]["content"] == SECRET
