"""Hostile import files end quickly with the part named: a SQLite view built to be slow, a zip
bomb, damaged zips, numbers where SQLite text belongs, JSON nested beyond reading; a BOM is
fine; an id used by another namespace's memory tells nothing about it."""

from __future__ import annotations

import io
import json
import os
import sqlite3
import time
import zipfile

import pytest
from django.test import override_settings

from apps.core.exceptions import ValidationFailed
from apps.memories import services
from apps.memories.models import Memory
from apps.transfer import importers
from apps.transfer.transfer import import_records

pytestmark = pytest.mark.django_db


def _problems(path, fmt) -> dict:
    started = time.monotonic()
    with pytest.raises(ValidationFailed) as caught:
        importers.read(path, fmt)
    assert time.monotonic() - started < 10
    return caught.value.errors


@override_settings(IMPORT_SQLITE_SECONDS=2)
def test_a_sqlite_view_built_to_be_slow_is_refused_in_seconds(tmp_path):
    path = tmp_path / "slow.db"
    db = sqlite3.connect(path)
    db.execute(
        "CREATE VIEW memories AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
        "SELECT 'x' AS content, i AS content_hash FROM n"
    )
    db.commit()
    db.close()
    assert "view, not a table" in _problems(path, "mcp_memory_service")["file"][0]


def test_reading_sqlite_stops_at_the_deadline(tmp_path):
    path = tmp_path / "many.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE memories (content TEXT, content_hash TEXT, created_at REAL)")
    db.executemany(
        "INSERT INTO memories VALUES (?, ?, ?)", [(f"m{i}", f"h{i}", i) for i in range(3000)]
    )
    db.commit()
    db.close()
    assert len(importers.read(path, "mcp_memory_service")) == 3000
    with override_settings(IMPORT_SQLITE_SECONDS=0):  # any statement is past the deadline
        assert "took longer than 0 s" in _problems(path, "mcp_memory_service")["file"][0]


def test_numbers_where_sqlite_text_belongs_are_read_as_text(tmp_path):
    path = tmp_path / "typed.db"
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE memories (id INTEGER, content TEXT, content_hash INTEGER, tags INTEGER, "
        "memory_type INTEGER, metadata INTEGER, created_at REAL)"
    )
    db.execute("INSERT INTO memories VALUES (1, 'Typed columns', 123, 7, 5, 9, 1.0)")
    db.commit()
    db.close()
    [(label, record)] = importers.read(path, "mcp_memory_service")
    assert label == "row 1" and record["id"] == "123" and record["content"] == "Typed columns"


@override_settings(IMPORT_MAX_COMPRESSION_RATIO=100)
def test_a_zip_bomb_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "bomb.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("notes/a.md", "# A\n\nok\n")
        archive.writestr("notes/big.md", "same line\n" * 4_000_000)  # 40 MB from ~40 KB
    assert path.stat().st_size < 200_000
    problems = _problems(path, "markdown")
    assert "zip bomb" in problems["notes/big.md"][0]


def test_a_damaged_zip_names_the_damaged_part(tmp_path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("good.md", "# Good\n\nfine text " * 50)
        archive.writestr("bad.md", "# Bad\n\n" + os.urandom(3000).hex())  # incompressible
    raw = bytearray(buffer.getvalue())
    start = raw.index(b"bad.md") + len(b"bad.md")  # the local header's name; data follows
    raw[start + 100 : start + 150] = b"\xff" * 50
    path = tmp_path / "damaged.zip"
    path.write_bytes(bytes(raw))
    problems = _problems(path, "markdown")
    assert "bad.md" in problems and "damaged" in problems["bad.md"][0]
    not_zip = tmp_path / "not.zip"
    not_zip.write_bytes(b"PK\x03\x04 truncated")
    assert "zip" in _problems(not_zip, "markdown")["file"][0]


def test_json_nested_beyond_reading_is_named(tmp_path):
    deep = tmp_path / "mem0.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    assert "Nested too deeply" in _problems(deep, "mem0")["file"][0]
    lines = tmp_path / "deep.jsonl"
    lines.write_text('{"content": "fine"}\n' + "[" * 100_000 + "]" * 100_000 + "\n")
    assert "Nested too deeply" in _problems(lines, "jsonl")["line 2"][0]


def test_a_byte_order_mark_is_accepted(tmp_path):
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"content": "Starts with a BOM"}).encode())
    assert importers.read(path, "jsonl") == [("line 1", {"content": "Starts with a BOM"})]


def test_an_id_of_another_namespaces_memory_is_no_oracle(namespace, other_namespace):
    secret = services.memory_create(namespace=other_namespace, content="Their secret").memory
    stats = import_records(
        [{"id": str(secret.pk), "content": "Mine, with an id someone else holds"}],
        namespace=namespace,
        progress=False,
    )
    assert stats.created == 1  # exactly as for a free id: nothing tells the id is taken
    mine = Memory.objects.get(namespace=namespace)
    assert mine.pk != secret.pk and mine.external_id == str(secret.pk)
    again = import_records(
        [{"id": str(secret.pk), "content": "Mine, with an id someone else holds"}],
        namespace=namespace,
        progress=False,
    )
    assert again.skipped == 1  # re-running the import finds it by that id


@override_settings(IMPORT_TRANSACTION_RECORDS=4)
def test_a_large_import_commits_batch_by_batch_and_can_be_cancelled(namespace):
    from apps.transfer import transfer

    records = [{"id": f"r{i}", "content": f"Batch record number {i}."} for i in range(12)]
    asked = []

    def stop_after_two_batches() -> bool:
        asked.append(1)
        return len(asked) > 2

    with pytest.raises(transfer.ImportCancelled) as cancelled:
        import_records(
            records,
            namespace=namespace,
            progress=False,
            batch_transactions=True,
            should_stop=stop_after_two_batches,
        )
    assert cancelled.value.stats.created == 8
    assert Memory.objects.filter(namespace=namespace).count() == 8  # two batches committed
    again = import_records(records, namespace=namespace, progress=False, batch_transactions=True)
    assert (again.created, again.skipped) == (4, 8)  # the rest; nothing twice
