"""How the memory write path announces its changes, for the history to record.

The write path (apps.memories.services) builds `Change`s and hands them to the registered
recorder; apps.history registers one when it is ready and stores them as revisions and trash
entries. The seam sits in this bottom room so the write path never imports apps.history (which
builds on memories): the dependency stays one-way, as with jobs and health checks.

An unregistered recorder fails closed: a write raises rather than going unrecorded.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from django.core.exceptions import ImproperlyConfigured
from django.db import models


class ChangeAction(models.TextChoices):
    CREATE = "create"
    UPDATE = "update"
    TIER = "tier", "tier change"
    ARCHIVE = "archive"
    UNARCHIVE = "unarchive"
    DELETE = "delete"
    MERGE = "merge"
    LINK = "link"
    UNLINK = "unlink"
    RESTORE = "restore", "restore a version"
    UNDELETE = "undelete", "restore from trash"
    # A curator's decision on a queue (keep both, resolved with a note, ...), recorded on each
    # memory of the pair so it can be undone from either history.
    DECISION = "decision", "queue decision"
    # A newer memory ended this one's validity (and linked it with `supersedes`).
    SUPERSEDE = "supersede", "superseded"


@dataclass(frozen=True)
class Change:
    """One memory's change, before it is stamped with actor, door and time.

    `before`/`after` hold only the fields the change touched, JSON-safe.
    """

    memory_id: Any
    namespace_id: int
    action: str
    before: dict | None = None
    after: dict | None = None


class Recorder(Protocol):
    def record(self, changes: Iterable[Change], *, actor: Any, door: str) -> None:
        """Store `changes` as revisions by `actor` through `door` (an unknown door raises)."""

    def trash(self, memory: Any, *, actor: Any, door: str) -> int:
        """Keep `memory`'s last version before it is deleted; returns how many edges it had."""


_recorder: Recorder | None = None


def register_recorder(recorder: Recorder) -> None:
    global _recorder
    _recorder = recorder


def recorder() -> Recorder:
    if _recorder is None:
        raise ImproperlyConfigured("No change recorder registered (is apps.history installed?).")
    return _recorder
