"""Reads of revisions and the trash, for REST, MCP, admin and the web UI."""

from __future__ import annotations

import uuid
from typing import Any

from django.db.models import Q, QuerySet

from apps.access.permissions import Action, Principal
from apps.access.scoping import require
from apps.core.exceptions import NotFound
from apps.memories.models import Memory, Namespace
from apps.memories.revisions import TRACKED, memory_state

from .models import MemoryRevision, TrashEntry


def _memory_id(memory: Memory | TrashEntry | uuid.UUID | str) -> uuid.UUID:
    if isinstance(memory, Memory):
        return memory.pk
    if isinstance(memory, TrashEntry):
        return memory.memory_id
    return memory if isinstance(memory, uuid.UUID) else uuid.UUID(str(memory))


def revisions_for_memory(memory: Memory | TrashEntry) -> QuerySet:
    """A memory's revisions, newest first (also of a memory waiting in the trash).

    By namespace and id: the memory (or trash entry) was found through the caller's access to
    its namespace, and revisions another namespace wrote under the same id are never its own.
    """
    return revisions_in(memory.namespace_id, _memory_id(memory))


def revisions_in(namespace_id: int, memory_id: uuid.UUID) -> QuerySet:
    return MemoryRevision.objects.filter(namespace_id=namespace_id, memory_id=memory_id).order_by(
        "-created_at", "-id"
    )


def trash_for_namespace(namespace: Namespace) -> QuerySet:
    """Deleted memories of a namespace that can still be restored, newest deletion first."""
    return TrashEntry.objects.filter(namespace=namespace).order_by("-deleted_at", "-id")


def revision_of_memory(memory: Memory | TrashEntry, revision_id: int):
    """One revision of this memory, or None (a revision id of another memory is not found)."""
    return revisions_for_memory(memory).filter(pk=revision_id).first()


def trash_entry_for(
    principal: Principal, entry_id: int, *, action: Action = Action.VIEW
) -> TrashEntry:
    """A trash entry `principal` can see (NotFound otherwise) and may do `action` to."""
    entry = (
        TrashEntry.objects.restrict(principal, Action.VIEW)
        .filter(pk=entry_id)
        .select_related("namespace")
        .first()
    )
    if entry is None:
        raise NotFound(f"Trash entry {entry_id} does not exist or you cannot access it.")
    require(principal, entry.namespace, action)
    return entry


def trash_entry_of_memory(principal: Principal, memory_id) -> TrashEntry | None:
    """The trash entry of a deleted memory, if `principal` can see its namespace."""
    return (
        TrashEntry.objects.restrict(principal, Action.VIEW)
        .filter(memory_id=_memory_id(memory_id))
        .select_related("namespace")
        .first()
    )


def revision_state(revision: MemoryRevision) -> dict[str, Any]:
    """The memory's tracked fields as they were right after `revision`.

    Rebuilt backwards from what is there now (the memory, or its trash entry) by undoing every
    later revision's `before`, so it is right even for memories older than the history.
    """
    same = {"namespace_id": revision.namespace_id}
    memory = Memory.objects.filter(pk=revision.memory_id, **same).first()
    if memory is not None:
        state = memory_state(memory)
    else:
        entry = TrashEntry.objects.filter(memory_id=revision.memory_id, **same).first()
        state = {k: v for k, v in (entry.snapshot if entry else {}).items() if k in TRACKED}
    later = revisions_in(revision.namespace_id, revision.memory_id).filter(
        Q(created_at__gt=revision.created_at)
        | Q(created_at=revision.created_at, id__gt=revision.pk)
    )
    for newer in later.only("before"):  # newest first: undo in reverse order
        for name, value in (newer.before or {}).items():
            if name in TRACKED:
                state[name] = value
    return state


def revision_state_before(revision: MemoryRevision) -> dict[str, Any]:
    """The tracked fields just before `revision` (empty for a creation)."""
    if revision.before is None and revision.after is not None and "content" in revision.after:
        return {}
    state = revision_state(revision)
    for name, value in (revision.before or {}).items():
        if name in TRACKED:
            state[name] = value
    return state
