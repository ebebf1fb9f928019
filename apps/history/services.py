"""Restoring versions and deleted memories, and purging the trash.

Restores go through the memory write path (apps/memories/services), so they validate, re-embed
when content changes and are recorded as revisions themselves.
"""

from __future__ import annotations

from django.db import transaction

from apps.core.exceptions import ValidationFailed
from apps.memories import services as memory_services
from apps.memories.models import Memory
from apps.memories.revisions import TRACKED, memory_state

from .models import Action, MemoryRevision, TrashEntry
from .purge import trash_purge
from .recording import Actor
from .selectors import revision_state

__all__ = ["change_undoable", "revision_restore", "revision_undo", "trash_purge", "trash_restore"]

# Field changes one click can take back (a merge, a refresh and a queue decision have their own).
UNDOABLE = {Action.UPDATE, Action.TIER, Action.ARCHIVE, Action.UNARCHIVE, Action.RESTORE}


def change_undoable(revision: MemoryRevision, current: dict) -> bool:
    """Can `revision` be taken back by putting its `before` values back? Only while the memory
    still holds what the revision wrote (`current` is its memory_state): a later change to the
    same fields would otherwise be lost silently."""
    before, after = revision.before or {}, revision.after or {}
    if revision.action not in UNDOABLE or not before or not after:
        return False
    if not set(after) <= set(TRACKED) or not set(before) <= set(TRACKED):
        return False
    return all(current.get(k) == v for k, v in after.items())


def _memory_of(revision: MemoryRevision) -> Memory | None:
    """The revision's memory, locked: in the revision's own namespace, never another's row
    that happens to carry the same id."""
    found = Memory.objects.select_for_update().filter(
        pk=revision.memory_id, namespace_id=revision.namespace_id
    )
    return found.first()


@transaction.atomic
def revision_restore(*, revision: MemoryRevision, actor: Actor = None, door: str) -> Memory:
    """Make the memory look as it did right after `revision`; recorded as a "restore" revision.

    A no-op (and no revision) when the memory already looks like that.
    """
    memory = _memory_of(revision)
    if memory is None:
        raise ValidationFailed(
            {"revision": "The memory was deleted; restore it from the trash first."}
        )
    target = revision_state(revision)
    current = memory_state(memory)
    changes = {k: target[k] for k in TRACKED if k in target and target[k] != current.get(k)}
    if not changes:
        return memory
    return memory_services.memory_update(
        memory=memory, actor=actor, door=door, action=Action.RESTORE, **changes
    )


@transaction.atomic
def revision_undo(*, revision: MemoryRevision, actor: Actor = None, door: str) -> Memory:
    """Put back the fields `revision` changed (an archive is unarchived, a promotion goes one
    tier back, an edit's text returns); recorded as a revision of its own."""
    memory = _memory_of(revision)
    if memory is None:
        raise ValidationFailed({"revision": "The memory was deleted; restore it from the trash."})
    if not change_undoable(revision, memory_state(memory)):
        raise ValidationFailed(
            {"revision": "The memory changed since; restore a version from its history instead."}
        )
    return memory_services.memory_update(
        memory=memory, actor=actor, door=door, **dict(revision.before)
    )


@transaction.atomic
def trash_restore(*, entry: TrashEntry, actor: Actor = None, door: str):
    """Put a deleted memory back with its id, tags and edges (see memory_undelete); the entry
    leaves the trash. Returns memory_undelete's result (edges restored and skipped)."""
    entry = TrashEntry.objects.select_for_update().filter(pk=entry.pk).first()
    if entry is None:
        raise ValidationFailed({"entry": "This trash entry was already restored or purged."})
    result = memory_services.memory_undelete(entry=entry, actor=actor, door=door)
    entry.delete()
    return result
