"""Refreshing memories: a curator vouches that they still hold, so they start fresh again."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from .. import revisions
from ..models import Memory

if TYPE_CHECKING:  # the history app sits above this one; only its type is named
    from apps.history.models import MemoryRevision


@transaction.atomic
def memories_refresh(
    *, memories: QuerySet[Memory], actor: revisions.Actor = None, door: str = "system"
) -> int:
    """Reset stability to 1 and the last access to now, so decay starts over from today.

    The decay job recomputes stability from `last_accessed_at`, which is why both move. Each
    memory gets an "update" revision with the two values before and after (neither is a field a
    version restore puts back: the next decay run derives stability again anyway).
    """
    now = timezone.now()
    rows = list(memories.values_list("id", "namespace_id", "stability", "last_accessed_at"))
    if not rows:
        return 0
    Memory.every_state.filter(pk__in=[row[0] for row in rows]).update(
        stability=1.0, last_accessed_at=now, updated_at=now
    )
    revisions.record(
        [
            revisions.Change(
                pk,
                ns,
                revisions.Action.UPDATE,
                {"stability": stability, "last_accessed_at": _iso(accessed)},
                {"stability": 1.0, "last_accessed_at": now.isoformat()},
            )
            for pk, ns, stability, accessed in rows
        ],
        actor=actor,
        door=door,
    )
    return len(rows)


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def refresh_revision(revision: MemoryRevision) -> bool:
    """Is this revision a refresh (what `memory_refresh_undo` takes back)?"""
    before, after = revision.before or {}, revision.after or {}
    return (
        revision.action == "update"
        and set(after) == {"stability", "last_accessed_at"}
        and (set(before) == set(after))
    )


@transaction.atomic
def memory_refresh_undo(
    *, memory: Memory, before: dict[str, Any], actor: revisions.Actor = None, door: str = "system"
) -> Memory:
    """Put back the stability and last access a refresh replaced (`before` is the refresh
    revision's before); recorded as a "restore" revision with the two values."""
    stability = float(before["stability"])
    accessed = parse_datetime(before["last_accessed_at"]) if before["last_accessed_at"] else None
    current = {"stability": memory.stability, "last_accessed_at": _iso(memory.last_accessed_at)}
    Memory.every_state.filter(pk=memory.pk).update(
        stability=stability, last_accessed_at=accessed, updated_at=timezone.now()
    )
    memory.stability, memory.last_accessed_at = stability, accessed
    revisions.record_one(
        memory,
        revisions.Action.RESTORE,
        current,
        {"stability": stability, "last_accessed_at": _iso(accessed)},
        actor=actor,
        door=door,
    )
    return memory
