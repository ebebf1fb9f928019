"""Imports from the tools people move from: markdown notes, mcp-memory-service, mem0."""

from __future__ import annotations

import json
import zipfile

import pytest
from django.core.management import CommandError, call_command

from apps.memories.models import CausalEdge, Memory
from apps.transfer import importers
from apps.transfer.exporting import export_markdown_zip, export_records
from apps.transfer.transfer import import_records
from tests.transfer_samples import (
    MCP_DELETED,
    MCP_MEMORIES,
    MEM0_EXPORT,
    markdown_zip,
    mcp_hash,
    mcp_memory_service_db,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("embedding_model")]


def test_formats_are_recognised_from_the_file(tmp_path):
    assert importers.detect(markdown_zip(tmp_path / "n.zip")) == "markdown"
    assert importers.detect(mcp_memory_service_db(tmp_path / "m.db")) == "mcp_memory_service"
    assert importers.detect(MEM0_EXPORT, "mem0_export.json") == "mem0"
    (tmp_path / "a.jsonl").write_text('{"content": "x"}\n')
    assert importers.detect(tmp_path / "a.jsonl", "a.jsonl") == "jsonl"


def test_markdown_notes_become_one_memory_per_heading_section(tmp_path):
    path = markdown_zip(tmp_path / "notes.zip")
    call_command("import_memories", str(path), namespace="notes", no_progress=True)
    memories = {m.title: m for m in Memory.objects.filter(namespace__name="notes")}

    claude = [m for m in memories.values() if m.file_path == "CLAUDE.md"]
    assert sorted(m.title for m in claude) == [
        "CLAUDE.md",
        "CLAUDE.md > Build",
        "CLAUDE.md > Never",
        "CLAUDE.md > Style",
    ]
    build = memories["CLAUDE.md > Build"]
    assert build.content.startswith("## Build") and "make test" in build.content

    # basic-memory: front-matter title and tags kept, its type and permalink in metadata.
    obs = memories["Search service > Observations"]
    assert obs.file_path == "projects/search-service.md"
    tags = set(obs.tags.values_list("name", flat=True))
    assert {"search", "architecture", "retrieval"} <= tags
    assert obs.metadata["front_matter"]["permalink"] == "projects/search-service"
    # Obsidian: list tags, inline #tags, the created date.
    daily = [m for m in memories.values() if m.file_path == "daily/2024-05-02.md"]
    assert len(daily) == 2
    assert {"daily", "ops", "incident"} <= set(daily[0].tags.values_list("name", flat=True))
    assert daily[0].created_at.date().isoformat() == "2024-05-02"

    # Importing the same zip again adds nothing.
    count = Memory.objects.count()
    call_command("import_memories", str(path), namespace="notes", no_progress=True)
    assert Memory.objects.count() == count


def test_mcp_memory_service_database_with_tags_types_dates_and_links(tmp_path):
    path = mcp_memory_service_db(tmp_path / "sqlite_vec.db")
    call_command("import_memories", str(path), namespace="moved", no_progress=True)
    rows = {m.content: m for m in Memory.objects.filter(namespace__name="moved")}
    assert set(rows) == {m[0] for m in MCP_MEMORIES}  # the soft-deleted one stays out
    assert MCP_DELETED not in rows
    pool = rows[MCP_MEMORIES[0][0]]
    assert pool.category == "decision"
    assert sorted(pool.tags.values_list("name", flat=True)) == ["database", "performance", "python"]
    assert pool.metadata["project"] == "api"
    assert pool.metadata["mcp_memory_service"]["memory_type"] == "decision"
    assert pool.created_at.timestamp() == pytest.approx(1717236000.5)
    assert pool.external_id == mcp_hash(pool.content)
    error = rows[MCP_MEMORIES[1][0]]
    assert error.category == "warning"
    edge = CausalEdge.objects.get(namespace__name="moved")
    assert (edge.source, edge.target, edge.relation) == (error, pool, "caused")
    assert edge.strength == pytest.approx(0.82)


def test_mem0_export(tmp_path):
    call_command("import_memories", str(MEM0_EXPORT), namespace="mem0", no_progress=True)
    first = Memory.objects.get(content="Prefers morning meetings and async updates")
    # mem0's id is kept as the public id; the memory gets an id of its own (issue 42).
    assert first.public_id == first.external_id == "0b6f2a3e-1c55-4f7a-9f0e-2d1c7e8a9b10"
    assert sorted(first.tags.values_list("name", flat=True)) == ["preferences", "work"]
    assert first.metadata["type"] == "preference"
    assert first.metadata["mem0"]["user_id"] == "arjun"
    assert first.created_at.isoformat() == "2024-07-20T16:15:31.123456+00:00"
    # A plain list (older mem0 versions) reads the same.
    plain = tmp_path / "list.json"
    plain.write_text(json.dumps([{"memory": "Likes green tea", "id": "m-1"}]))
    call_command("import_memories", str(plain), namespace="mem0b", no_progress=True)
    assert Memory.objects.get(namespace__name="mem0b").external_id == "m-1"


def test_every_bad_record_is_reported_and_nothing_written(tmp_path):
    lines = [
        json.dumps({"id": "a", "namespace": "ns", "content": "fine"}),
        "{not json",
        json.dumps({"id": "c", "namespace": "ns", "content": "x", "category": "gossip"}),
        json.dumps({"id": "d", "namespace": "ns", "content": "y", "created_at": "soonish"}),
    ]
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(CommandError) as info:
        call_command("import_memories", str(path), no_progress=True)
    # JSON errors come first (reading), then a file that parses is checked field by field.
    assert "line 2: Not valid JSON" in str(info.value)
    path.write_text("\n".join(lines[:1] + lines[2:]) + "\n")
    with pytest.raises(CommandError) as info:
        call_command("import_memories", str(path), no_progress=True)
    assert "line 2: category: " in str(info.value)
    assert "line 3: created_at: " in str(info.value)
    assert Memory.objects.count() == 0


def test_a_foreign_tool_file_with_a_bad_note_writes_nothing(tmp_path):
    path = tmp_path / "notes.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("good.md", "# Good\n\nA fine note.")
        archive.writestr("bad.md", "---\ntags: [a\n---\nBroken front matter")
    with pytest.raises(CommandError, match="bad.md.front_matter: Front matter is not valid"):
        call_command("import_memories", str(path), namespace="n", no_progress=True)
    assert Memory.objects.count() == 0


def test_markdown_export_imports_back_exactly(namespace, tmp_path):
    from apps.memories.services import edge_create, memory_create

    a = memory_create(
        namespace=namespace,
        content="We chose Postgres\n\n## Why\npgvector and one database to run",
        title="Database: choice",
        category="decision",
        tags=["db", "infra"],
        metadata={"ticket": 42, "nested": {"when": "2024-03-01"}},
        created_at="2024-03-01T10:00:00Z",
    ).memory
    b = memory_create(namespace=namespace, content="Slow queries fixed with an index").memory
    edge_create(source=a, target=b, relation="caused", strength=0.6)
    before = list(export_records([namespace.name]))
    zipped = tmp_path / "export.zip"
    zipped.write_bytes(b"".join(export_markdown_zip(export_records([namespace.name]))))

    Memory.objects.filter(namespace=namespace).delete()
    labelled = importers.read(zipped, "markdown")
    import_records(labelled, progress=False, namespace=namespace)
    after = list(export_records([namespace.name]))
    # Where each memory came from is kept; the import that brought it back is added to it.
    for record in after:
        assert record["provenance"].pop("imported")["door"] == "cli"
    assert after == before
