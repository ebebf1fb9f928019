"""The recorder the memory write path reports to (apps.core.changes): it stores revisions and
trash entries inside the write's own transaction, so a change and its record commit or roll
back together. Registered by HistoryConfig.ready().
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.utils import timezone

from apps.access.models import ApiToken, OAuthConnection
from apps.core.changes import Change
from apps.memories.copying import copy_rows
from apps.memories.models import CausalEdge, Memory
from apps.memories.revisions import KEPT, edge_dict, memory_state

from .models import Action, Door, MemoryRevision, TrashEntry

Actor = AbstractBaseUser | ApiToken | OAuthConnection | AnonymousUser | None


def actor_fields(actor: Actor, door: str) -> dict[str, Any]:
    """Who and through which door, as MemoryRevision columns. An unknown door is a bug."""
    if door not in Door.values:
        raise ValueError(f"Unknown door {door!r}; one of {', '.join(Door.values)}.")
    if isinstance(actor, ApiToken):
        label = f"token {actor.name} ({actor.prefix}…)"
        return {"actor_token": actor, "actor_user": None, "actor_label": label, "door": door}
    if isinstance(actor, OAuthConnection):
        # A connected app acts for its person: the change is theirs, made through the app.
        app = actor.application.name or actor.application.client_id
        label = f"{actor.user.get_username()} via {app}"
        return {"actor_token": None, "actor_user": actor.user, "actor_label": label, "door": door}
    if isinstance(actor, AbstractBaseUser) and actor.pk is not None:
        return {
            "actor_token": None,
            "actor_user": actor,
            "actor_label": actor.get_username(),
            "door": door,
        }
    if actor is not None and not isinstance(actor, AnonymousUser):
        raise TypeError(f"actor must be a user, an ApiToken or None, not {type(actor).__name__}.")
    return {"actor_token": None, "actor_user": None, "actor_label": door, "door": door}


def record(changes: Iterable[Change], *, actor: Actor, door: str) -> list[MemoryRevision]:
    """Write the revisions of `changes` in one INSERT, all stamped with one actor and time."""
    who = actor_fields(actor, door)
    now = timezone.now()
    rows = [
        MemoryRevision(
            memory_id=c.memory_id,
            namespace_id=c.namespace_id,
            action=c.action,
            before=c.before,
            after=c.after,
            created_at=now,
            **who,
        )
        for c in changes
    ]
    copy_rows(MemoryRevision, rows)  # one COPY: a batch of a thousand creations is cheap
    return rows


def trash_put(memory: Memory, *, actor: Actor, door: str) -> TrashEntry:
    """Keep `memory`'s last version, tags and edges, and record its deletion (and the unlink on
    every other end). Call before deleting the row, in the same transaction."""
    who = actor_fields(actor, door)
    state = memory_state(memory)
    snapshot = {**state, **{name: _json(getattr(memory, name)) for name in KEPT}}
    if memory.embedding is not None:
        snapshot["embedding"] = [float(x) for x in memory.embedding]
    edges = list(CausalEdge.objects.touching([memory.pk]))
    entry, _ = TrashEntry.objects.update_or_create(
        memory_id=memory.pk,
        namespace_id=memory.namespace_id,
        defaults={
            "snapshot": snapshot,
            "tags": state["tags"],
            "edges": [edge_dict(e) for e in edges],
            "deleted_at": timezone.now(),
            "deleted_by": who["actor_label"],
            "door": door,
        },
    )
    changes = [Change(memory.pk, memory.namespace_id, Action.DELETE, state, None)]
    for edge in edges:
        other = edge.target_id if edge.source_id == memory.pk else edge.source_id
        changes.append(
            Change(other, edge.namespace_id, Action.UNLINK, {"edge": edge_dict(edge)}, None)
        )
    record(changes, actor=actor, door=door)
    return entry


def _json(value: Any) -> Any:
    return value.isoformat() if hasattr(value, "isoformat") else value


class HistoryRecorder:
    """apps.core.changes.Recorder, backed by MemoryRevision and TrashEntry."""

    def record(self, changes: Iterable[Change], *, actor: Actor, door: str) -> None:
        record(changes, actor=actor, door=door)

    def trash(self, memory: Memory, *, actor: Actor, door: str) -> int:
        return len(trash_put(memory, actor=actor, door=door).edges)
