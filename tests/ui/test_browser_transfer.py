"""In a real browser: import a file (a rejected one writes nothing and names its bad lines; a
markdown zip and an mcp-memory-service database become memories) and export a namespace that
imports back exactly."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from apps.memories.models import CausalEdge, Memory
from tests.transfer_samples import MCP_MEMORIES, markdown_zip, mcp_memory_service_db

from .conftest import login, shoot
from .test_browser_pages import fits

pytestmark = pytest.mark.django_db(transaction=True)


def _upload(page, path) -> None:
    page.goto("/ns/acme/transfer/")
    page.set_input_files("#import-file", str(path))
    page.click("#import-form button[type=submit]")


def _result(page, text: str) -> None:
    """The run's outcome; an import on a busy machine may take a while to embed."""
    expect(page.locator("#import-result")).to_contain_text(text, timeout=120_000)


def _snapshot(namespace):
    rows = sorted(
        (
            m.public_id,
            m.content,
            m.title,
            m.category,
            m.tier,
            m.importance,
            m.archived,
            m.created_at,
            m.updated_at,
            sorted(t.name for t in m.tags.all()),
            json.dumps(m.metadata, sort_keys=True),
            m.file_path,
            m.source,
            m.trigger_phrases,
        )
        for m in Memory.objects.filter(namespace=namespace).prefetch_related("tags")
    )
    edges = sorted(
        (e.source.public_id, e.target.public_id, e.relation, e.strength, e.created_at)
        for e in CausalEdge.objects.filter(namespace=namespace).select_related("source", "target")
    )
    return rows, edges


def test_a_file_with_a_bad_line_is_rejected_with_its_line_number(page, admin_user, acme, tmp_path):
    before = Memory.objects.filter(namespace=acme).count()
    path = tmp_path / "notes.jsonl"
    records = [
        {"id": "n-1", "content": "Deploys happen on Tuesdays", "tags": ["deploy"]},
        {"id": "n-2", "content": "Bad category here", "category": "gossip"},
        {"id": "n-3", "content": "Rollbacks use the previous image"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    login(page, "admin")
    _upload(page, path)
    _result(page, "Nothing imported")
    expect(page.locator(".import-report .problems")).to_contain_text("line 2: category:")
    shoot(page, "transfer-rejected")
    assert Memory.objects.filter(namespace=acme).count() == before
    assert not Memory.objects.filter(content="Deploys happen on Tuesdays").exists()


def test_import_a_markdown_zip_and_an_mcp_memory_service_database(page, admin_user, acme, tmp_path):
    login(page, "admin")
    _upload(page, markdown_zip(tmp_path / "notes.zip"))
    _result(page, "Imported: 9 new, 0 already stored")
    page.goto("/ns/acme/memories/?file_path=CLAUDE.md")
    expect(page.locator("table.list")).to_contain_text("CLAUDE.md > Build")

    _upload(page, mcp_memory_service_db(tmp_path / "sqlite_vec.db"))
    _result(page, "Imported: 3 new, 0 already stored")
    _result(page, "1 link")
    shoot(page, "transfer-import")
    page.goto("/ns/acme/memories/?category=warning")
    expect(page.locator("table.list")).to_contain_text(MCP_MEMORIES[1][0][:40])


def test_export_then_import_is_lossless(page, admin_user, acme, tmp_path, settings):
    settings.VECTOR_INDEX_BEHIND_MIN = 4  # the import's rows wait for the HNSW index
    before = _snapshot(acme)
    login(page, "admin")
    page.goto("/ns/acme/transfer/")
    shoot(page, "transfer")
    with page.expect_download() as info:
        page.click("#export-jsonl")
    exported = tmp_path / "acme.jsonl"
    info.value.save_as(exported)
    assert len(exported.read_text().splitlines()) == len(before[0])

    # The selection of the browse page exports only what the filters show.
    page.goto("/ns/acme/memories/?category=decision")
    with page.expect_download() as info:
        page.click("#export-selection-jsonl")
    selection = [json.loads(line) for line in info.value.path().read_text().splitlines()]
    assert selection and {r["category"] for r in selection} == {"decision"}

    Memory.objects.filter(namespace=acme).delete()
    _upload(page, exported)
    _result(page, f"Imported: {len(before[0])} new, 0 already stored")
    assert _snapshot(acme) == before
    waiting = Memory.objects.filter(namespace=acme, vector_indexed=False).count()
    assert waiting == len(before[0])
    expect(page.locator("#import-following")).to_contain_text(
        f"{waiting} memories into the search index"
    )
    shoot(page, "transfer-import-following")


def test_export_and_import_from_a_phone(phone, admin_user, acme, tmp_path):
    """At 390 px the page fits the screen, the export downloads every memory and the import
    form takes the file back (nothing new: every record is already stored)."""
    count = Memory.objects.filter(namespace=acme).count()
    login(phone, "admin")
    phone.goto("/ns/acme/transfer/")
    fits(phone)
    shoot(phone, "transfer-390")
    with phone.expect_download() as info:
        phone.click("#export-jsonl")
    exported = tmp_path / "acme.jsonl"
    info.value.save_as(exported)
    assert len(exported.read_text().splitlines()) == count
    _upload(phone, exported)
    _result(phone, f"Imported: 0 new, {count} already stored")
    fits(phone)
    assert Memory.objects.filter(namespace=acme).count() == count
