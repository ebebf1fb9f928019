"""Neutral-format import and export through the real management commands."""

import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from apps.memories.models import CausalEdge, Memory, Namespace
from apps.memories.services import edge_create, memory_create

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("embedding_model")]

LOCOMO = Path(__file__).resolve().parents[2].parent / "shared/benchmarks/locomo-dev/memories.jsonl"


def _write(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _snapshot():
    rows = []
    for m in Memory.objects.order_by("created_at", "content").prefetch_related("tags"):
        rows.append(
            (
                m.public_id,
                m.namespace.name,
                m.content,
                m.title,
                m.category,
                m.tier,
                m.importance,
                m.archived,
                m.created_at,
                m.updated_at,
                sorted(t.name for t in m.tags.all()),
                m.metadata,
            )
        )
    edges = sorted(
        (e.source.public_id, e.target.public_id, e.relation, e.strength, e.created_at)
        for e in CausalEdge.objects.select_related("source", "target")
    )
    return rows, edges


def test_export_then_import_is_lossless(namespace, tmp_path):
    a = memory_create(
        namespace=namespace,
        content="We chose Postgres for pgvector",
        category="decision",
        tags=["db"],
        title="Database choice",
        importance=0.9,
        metadata={"ticket": 42},
        created_at="2024-03-01T10:00:00Z",
    ).memory
    b = memory_create(namespace=namespace, content="Slow queries fixed with an index").memory
    edge_create(source=a, target=b, relation="caused", strength=0.6)
    before = _snapshot()

    out = tmp_path / "export.jsonl"
    call_command("export_memories", output=str(out))
    Namespace.objects.all().delete()
    assert Memory.objects.count() == 0
    call_command("import_memories", str(out), no_progress=True)

    assert _snapshot() == before
    # The uuids come back as public ids (what an export writes); each memory has a fresh
    # primary key, as any id not already the namespace's own gets (issue 42).
    restored = Memory.objects.get(external_id=str(a.pk))
    assert restored.pk != a.pk and restored.embedding is not None


def test_import_keeps_foreign_ids_and_is_safe_to_repeat(tmp_path):
    records = [
        {
            "id": f"conv-1:D1:{i}",
            "namespace": "conv-1",
            "content": f"Speaker: turn {i}",
            "created_at": "2023-05-08T13:56:00",
            "tags": ["session-1"],
            "metadata": {"dia_id": f"D1:{i}"},
        }
        for i in range(1, 6)
    ]
    path = _write(tmp_path / "m.jsonl", records)
    call_command("import_memories", str(path), no_progress=True)
    call_command("import_memories", str(path), no_progress=True)
    assert Memory.objects.count() == 5
    memory = Memory.objects.get(external_id="conv-1:D1:3")
    assert memory.content == "Speaker: turn 3" and memory.metadata == {"dia_id": "D1:3"}
    assert memory.created_at.isoformat() == "2023-05-08T13:56:00+00:00"


def test_a_bad_record_names_its_line_and_imports_nothing(tmp_path):
    records = [
        {"id": "a", "namespace": "ns", "content": "fine"},
        {"id": "b", "namespace": "ns", "content": "bad date", "created_at": "yesterday-ish"},
    ]
    path = _write(tmp_path / "bad.jsonl", records)
    with pytest.raises(CommandError, match="line 2: created_at: "):
        call_command("import_memories", str(path), no_progress=True)
    assert Memory.objects.count() == 0


@pytest.mark.skipif(not LOCOMO.exists(), reason="shared benchmarks not present")
def test_locomo_dev_imports_every_memory_with_an_embedding():
    call_command("import_memories", str(LOCOMO), no_progress=True)
    assert Memory.objects.count() == 2760
    assert not Memory.objects.filter(embedding__isnull=True).exists()
    assert Namespace.objects.count() == 5


def test_export_streams_in_keyset_batches_without_losing_or_repeating_rows(namespace):
    from apps.transfer.exporting import export_records

    same_instant = "2024-05-01T12:00:00Z"
    for i in range(7):
        memory_create(namespace=namespace, content=f"Fact number {i}", created_at=same_instant)
    for i in range(3):
        memory_create(namespace=namespace, content=f"Later fact {i}")
    whole = list(export_records([namespace.name]))
    assert len(whole) == 10
    assert list(export_records([namespace.name], batch=2)) == whole
    assert list(export_records([namespace.name], batch=3)) == whole


def test_an_exported_selection_keeps_only_links_inside_it(namespace):
    from apps.transfer.exporting import export_records

    a = memory_create(namespace=namespace, content="Cache sessions", category="decision").memory
    b = memory_create(namespace=namespace, content="Redis is the cache", category="decision").memory
    c = memory_create(namespace=namespace, content="Redis ran out of memory").memory
    edge_create(source=a, target=b, relation="depends_on")
    edge_create(source=a, target=c, relation="caused")
    selection = Memory.objects.filter(namespace=namespace, category="decision")
    records = {r["content"]: r for r in export_records(queryset=selection)}
    assert set(records) == {"Cache sessions", "Redis is the cache"}
    assert [e["target"] for e in records["Cache sessions"]["edges"]] == [str(b.pk)]
