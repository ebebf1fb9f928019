"""Restoring from the trash: validity comes back with the memory, an entry written before the
validity fields existed still restores, and a text stored again meanwhile is a clear error."""

from __future__ import annotations

import pytest

from apps.core.exceptions import ValidationFailed
from apps.history.models import TrashEntry
from apps.history.services import trash_restore
from apps.memories.models import Memory
from apps.memories.services import memory_create, memory_delete

pytestmark = pytest.mark.django_db


def test_validity_survives_the_trash_and_old_entries_restore(namespace, embedding_model):
    memory = memory_create(
        namespace=namespace, content="Logs are kept for 30 days.", valid_until="2025-09-01"
    ).memory
    memory_delete(memory=memory, door="ui")
    entry = TrashEntry.objects.get(memory_id=memory.pk)
    trash_restore(entry=entry, door="ui")
    assert Memory.objects.get(pk=memory.pk).valid_until.date().isoformat() == "2025-09-01"

    memory_delete(memory=Memory.objects.get(pk=memory.pk), door="ui")
    entry = TrashEntry.objects.get(memory_id=memory.pk)
    for name in ("valid_from", "valid_until"):  # as trashed before these fields existed
        entry.snapshot.pop(name)
    entry.save()
    trash_restore(entry=entry, door="ui")
    assert Memory.objects.get(pk=memory.pk).valid_until is None


def test_restoring_a_text_stored_again_names_the_content(namespace, embedding_model):
    memory = memory_create(namespace=namespace, content="Standup is at 9:30.").memory
    memory_delete(memory=memory, door="ui")
    # The same record again: the same text at the same time (a text said again at another time
    # is a memory of its own, which a restore may bring back beside it).
    memory_create(namespace=namespace, content="Standup is at 9:30.", created_at=memory.created_at)
    with pytest.raises(ValidationFailed) as caught:
        trash_restore(entry=TrashEntry.objects.get(memory_id=memory.pk), door="ui")
    assert "content" in caught.value.errors
