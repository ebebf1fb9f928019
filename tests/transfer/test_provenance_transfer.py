"""Provenance through export and import: an exported memory imported into a new namespace keeps
every field of where it came from, and the import that brought it is added; a file without
provenance is described as written by the import, with the file's name and format."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from apps.access.services import token_create
from apps.memories import provenance
from apps.memories.models import Memory
from apps.memories.provenance import Origin
from apps.memories.services import memory_create

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("embedding_model")]


def test_export_then_import_into_a_new_namespace_keeps_every_provenance_field(namespace, tmp_path):
    ana = get_user_model().objects.create_user(username="ana", password="x-secret-9")
    token, _ = token_create(name="ci-importer", namespaces=[namespace])
    memory_create(
        namespace=namespace,
        content="Deploys run from the release branch only.",
        actor=ana,
        door="ui",
        source_url="https://wiki.example.org/deploys",
    )
    memory_create(
        namespace=namespace,
        content="The search index is rebuilt nightly at two.",
        actor=token,
        door="mcp",
        origin=Origin(client="x-client 1.2"),
    )
    before = {m.content: provenance.of_memory(m) for m in Memory.objects.all()}
    assert before["The search index is rebuilt nightly at two."]["client"] == "x-client 1.2"

    out = tmp_path / "export.jsonl"
    call_command("export_memories", output=str(out), namespaces=[namespace.name])
    call_command("import_memories", str(out), namespace="copy", no_progress=True)

    copies = {m.content: provenance.of_memory(m) for m in Memory.objects.in_namespace("copy")}
    assert set(copies) == set(before)
    for content, original in before.items():
        copy = copies[content]
        imported = copy.pop("imported")
        assert copy == {k: v for k, v in original.items() if k != "imported"}, content
        assert imported["file"] == "export.jsonl" and imported["format"] == "jsonl"
        assert imported["door"] == "cli" and imported["at"]
    # The filters read the columns the import restored.
    copied = Memory.objects.in_namespace("copy")
    assert copied.written_by(person="ana").count() == 1
    assert copied.written_by(credential="ci-importer", door="mcp").count() == 1


def test_a_file_without_provenance_is_written_by_the_import(tmp_path):
    path = tmp_path / "notes.jsonl"
    record = {"id": "n-1", "namespace": "notes", "content": "Backups are kept for 30 days."}
    path.write_text(json.dumps(record) + "\n")
    call_command("import_memories", str(path), no_progress=True)
    found = provenance.of_memory(Memory.objects.get(external_id="n-1"))
    assert found["door"] == "import"
    assert found["import"] == {"file": "notes.jsonl", "format": "jsonl"}
    assert found["imported"] is None and found["written_at"]


def test_a_forged_provenance_is_refused_by_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    record = {
        "id": "n-2",
        "namespace": "notes",
        "content": "A note.",
        "provenance": {"door": "mcp", "source_url": "javascript:alert(1)"},
    }
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(CommandError, match=r"provenance\.source_url"):
        call_command("import_memories", str(path), no_progress=True)
    assert not Memory.objects.filter(external_id="n-2").exists()
