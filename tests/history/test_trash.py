"""Deleting keeps the last version in the namespace's trash; restoring brings back id, tags and
edges; the purge drops only entries older than HISTORY_TRASH_DAYS."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.core.exceptions import ValidationFailed
from apps.history.models import Action, MemoryRevision, TrashEntry
from apps.history.selectors import revisions_for_memory, trash_for_namespace
from apps.history.services import trash_purge, trash_restore
from apps.memories.models import CausalEdge, Memory
from apps.memories.services import edge_create, memory_create, memory_delete, memory_update

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("embedding_model")]


def _create(namespace, content, **fields):
    return memory_create(namespace=namespace, content=content, **fields).memory


@pytest.fixture
def linked(namespace):
    """a -caused-> b -depends_on-> c; b carries tags and a changed title."""
    a = _create(namespace, "The cache was cold after deploy")
    b = _create(namespace, "Warm the cache before switching traffic", tags=["ops", "perf"])
    c = _create(namespace, "Traffic switch script lives in deploy/switch.sh")
    edge_create(source=a, target=b, relation="caused", strength=0.7)
    edge_create(source=b, target=c, relation="depends_on")
    memory_update(memory=b, title="Warm-up rule")
    return a, b, c


def test_delete_keeps_last_version_tags_and_edges_in_the_trash(namespace, linked):
    a, b, c = linked
    b_id = b.pk
    memory_delete(memory=b, door="rest")
    [entry] = trash_for_namespace(namespace)
    assert entry.memory_id == b_id and entry.door == "rest"
    assert entry.snapshot["title"] == "Warm-up rule"
    assert entry.tags == ["ops", "perf"]
    assert {(e["source"], e["relation"], e["target"]) for e in entry.edges} == {
        (str(a.pk), "caused", str(b_id)),
        (str(b_id), "depends_on", str(c.pk)),
    }
    assert revisions_for_memory(entry).first().action == Action.DELETE
    assert revisions_for_memory(a).first().action == Action.UNLINK


def test_restore_from_trash_brings_back_id_tags_embedding_and_edges(namespace, linked):
    a, b, c = linked
    embedding = Memory.objects.get(pk=b.pk).embedding
    b_id = b.pk
    memory_delete(memory=b)
    b.pk = b_id
    result = trash_restore(entry=TrashEntry.objects.get(), actor=None, door="ui")

    restored = Memory.objects.get(pk=b.pk)
    assert result.memory.pk == b.pk and result.edges_restored == 2 and not result.edges_skipped
    assert restored.title == "Warm-up rule" and restored.created_at == b.created_at
    assert sorted(t.name for t in restored.tags.all()) == ["ops", "perf"]
    assert list(restored.embedding) == pytest.approx(list(embedding))
    edges = set(CausalEdge.objects.values_list("source_id", "relation", "target_id", "strength"))
    assert edges == {(a.pk, "caused", b.pk, 0.7), (b.pk, "depends_on", c.pk, 1.0)}
    assert not TrashEntry.objects.exists()
    actions = [r.action for r in revisions_for_memory(b)]
    assert actions[:2] == [Action.UNDELETE, Action.DELETE]
    assert revisions_for_memory(a).first().action == Action.LINK


def test_restoring_a_record_written_again_meanwhile_is_a_clear_400_not_a_crash(namespace):
    when = "2024-05-01T12:00:00Z"
    first = _create(namespace, "Sessions live in Redis.", created_at=when)
    memory_delete(memory=first)
    again = _create(namespace, "Sessions live in Redis.", created_at=when)  # the same record
    with pytest.raises(ValidationFailed) as refused:
        trash_restore(entry=TrashEntry.objects.get(), actor=None, door="rest")
    assert "content" in refused.value.errors
    assert list(Memory.objects.values_list("pk", flat=True)) == [again.pk]
    assert TrashEntry.objects.count() == 1  # still there to restore later


def test_edges_whose_other_end_is_gone_are_skipped_and_reported(namespace, linked):
    a, b, c = linked
    b_id, c_id = b.pk, c.pk
    memory_delete(memory=b)
    memory_delete(memory=c)
    result = trash_restore(entry=TrashEntry.objects.get(memory_id=b_id), door="ui")
    assert result.edges_restored == 1
    assert [e["target"] for e in result.edges_skipped] == [str(c_id)]
    assert CausalEdge.objects.get().source_id == a.pk


def test_trash_is_per_namespace(namespace, other_namespace):
    memory_delete(memory=_create(namespace, "In the test namespace"))
    memory_delete(memory=_create(other_namespace, "In the other namespace"))
    assert [e.content for e in trash_for_namespace(other_namespace)] == ["In the other namespace"]


def test_purge_removes_only_entries_older_than_the_setting(namespace, settings):
    settings.HISTORY_TRASH_DAYS = 30
    old = _create(namespace, "Deleted long ago").pk
    recent = _create(namespace, "Deleted yesterday").pk
    memory_delete(memory=Memory.objects.get(pk=old))
    memory_delete(memory=Memory.objects.get(pk=recent))
    now = timezone.now()
    TrashEntry.objects.filter(memory_id=old).update(deleted_at=now - timedelta(days=31))
    TrashEntry.objects.filter(memory_id=recent).update(deleted_at=now - timedelta(days=29))

    assert trash_purge() == 1

    assert list(TrashEntry.objects.values_list("memory_id", flat=True)) == [recent]
    assert not MemoryRevision.objects.filter(memory_id=old).exists()
    assert MemoryRevision.objects.filter(memory_id=recent).count() == 2
    assert trash_purge(older_than_days=0) == 1
