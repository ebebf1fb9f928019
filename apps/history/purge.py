"""Purging the trash: the periodic job's body (apps/jobs runs it per namespace under its lock).

Kept apart from services.py so the jobs room can import it without importing the memory write
path (which itself queues jobs).
"""

from __future__ import annotations

from collections import defaultdict
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from apps.jobs.models import Job
from apps.jobs.services import register_job
from apps.memories.models import Memory, Namespace

from .conf import history_settings
from .models import MemoryRevision, TrashEntry


@transaction.atomic
def trash_purge(*, older_than_days: int | None = None, namespace: Namespace | None = None) -> int:
    """Drop trash entries older than HISTORY_TRASH_DAYS (or `older_than_days`); returns how many.

    The revisions of a purged memory go with it: nothing can reach them any more. Idempotent and
    safe to run twice at once (a second run finds nothing left to delete).
    """
    days = history_settings().trash_days if older_than_days is None else older_than_days
    entries = TrashEntry.objects.filter(deleted_at__lt=timezone.now() - timedelta(days=days))
    if namespace is not None:
        entries = entries.filter(namespace=namespace)
    found = list(
        entries.select_for_update(skip_locked=True).values_list("pk", "namespace_id", "memory_id")
    )
    if not found:
        return 0
    # By namespace and id: revisions another namespace wrote under the same id are its own.
    by_namespace = defaultdict(list)
    for _, namespace_id, memory_id in found:
        by_namespace[namespace_id].append(memory_id)
    for namespace_id, ids in by_namespace.items():
        live = Memory.objects.filter(namespace_id=namespace_id, pk__in=ids).values("pk")
        MemoryRevision.objects.filter(namespace_id=namespace_id, memory_id__in=ids).exclude(
            memory_id__in=live
        ).delete()
    TrashEntry.objects.filter(pk__in=[pk for pk, _, _ in found]).delete()
    return len(found)


def trash_purge_update(*, namespace: Namespace, **_options) -> dict:
    """The job: purge one namespace's expired trash."""
    return {"purged": trash_purge(namespace=namespace)}


def register() -> None:
    register_job(Job.TRASH_PURGE, trash_purge_update)
