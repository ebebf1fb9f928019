"""Restoring versions and deleted memories, and purging the trash.

Restores go through the memory write path (apps/memories/services), so they validate, re-embed
when content changes and are recorded as revisions themselves.
"""

from __future__ import annotations

from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from apps.core.exceptions import ValidationFailed
from apps.memories import services as memory_services
from apps.memories.models import Memory, Namespace

from .conf import history_settings
from .models import Action, MemoryRevision, TrashEntry
from .recording import TRACKED, Actor, memory_state
from .selectors import revision_state


@transaction.atomic
def revision_restore(*, revision: MemoryRevision, actor: Actor = None, door: str) -> Memory:
    """Make the memory look as it did right after `revision`; recorded as a "restore" revision.

    A no-op (and no revision) when the memory already looks like that.
    """
    memory = Memory.objects.select_for_update().filter(pk=revision.memory_id).first()
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


def trash_restore(*, entry: TrashEntry, actor: Actor = None, door: str):
    """Put a deleted memory back with its id, tags and edges (see memory_undelete)."""
    return memory_services.memory_undelete(entry=entry, actor=actor, door=door)


@transaction.atomic
def trash_purge(*, older_than_days: int | None = None, namespace: Namespace | None = None) -> int:
    """Drop trash entries older than HISTORY_TRASH_DAYS (or `older_than_days`).

    The revisions of a purged memory go with it: nothing can reach them any more.
    """
    days = history_settings().trash_days if older_than_days is None else older_than_days
    entries = TrashEntry.objects.filter(deleted_at__lt=timezone.now() - timedelta(days=days))
    if namespace is not None:
        entries = entries.filter(namespace=namespace)
    ids = list(entries.values_list("memory_id", flat=True))
    if not ids:
        return 0
    MemoryRevision.objects.filter(memory_id__in=ids).exclude(
        memory_id__in=Memory.objects.filter(pk__in=ids).values("pk")
    ).delete()
    TrashEntry.objects.filter(memory_id__in=ids).delete()
    return len(ids)


def trash_purge_job(*, namespace: Namespace, **_options) -> dict:
    """The periodic job's body, per namespace (apps/jobs runs it under its lock)."""
    return {"purged": trash_purge(namespace=namespace)}
