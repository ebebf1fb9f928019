"""A large import written by several worker processes (import_memories --workers)."""

import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from apps.history.models import MemoryRevision
from apps.memories.models import CausalEdge, Memory, Namespace, Passage

# The workers are other processes: they see only what is committed.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("embedding_model")]


def _records(count: int) -> list[dict]:
    records = [
        {
            "id": f"conv:D1:{i}",
            "namespace": "team",
            "content": f"Ana: Step {i} of the release is done. The checklist for step {i} is next.",
            "created_at": "2024-05-08T13:56:00",
            "tags": ["release"],
        }
        for i in range(count)
    ]
    records[-1]["edges"] = [{"target": "conv:D1:0", "relation": "caused"}]
    return records


def _write(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _import(path: Path, workers: int) -> str:
    from io import StringIO

    out = StringIO()
    call_command("import_memories", str(path), workers=workers, no_progress=True, stdout=out)
    return out.getvalue()


def test_workers_store_every_record_once_with_its_passages_links_and_history(tmp_path):
    path = _write(tmp_path / "m.jsonl", _records(40))
    assert "40 new, 0 already stored, 1 link" in _import(path, workers=2)
    memories = Memory.objects.filter(namespace__name="team")
    assert memories.count() == 40
    assert memories.values("external_id").distinct().count() == 40
    assert not memories.filter(embedding__isnull=True).exists()
    assert Passage.objects.filter(memory__in=memories, previous__isnull=True).count() == 80
    assert CausalEdge.objects.filter(relation="caused").count() == 1
    assert MemoryRevision.objects.filter(action="create", door="cli").count() == 40
    # Imported again: nothing is stored twice.
    assert "0 new, 40 already stored" in _import(path, workers=2)
    assert memories.count() == 40


def test_a_stopped_run_goes_on_where_it_stopped(tmp_path):
    records = _records(30)
    _import(_write(tmp_path / "first.jsonl", records[:12]), workers=1)
    assert "18 new, 12 already stored" in _import(_write(tmp_path / "all.jsonl", records), 3)
    assert Memory.objects.filter(namespace__name="team").count() == 30


def test_a_bad_record_stops_the_workers_before_anything_is_written(tmp_path):
    records = _records(20)
    records[7]["created_at"] = "yesterday-ish"
    with pytest.raises(CommandError, match="line 8: created_at: "):
        _import(_write(tmp_path / "bad.jsonl", records), workers=2)
    assert Memory.objects.count() == 0
    assert not Namespace.objects.filter(name="team").exists()
