"""Writing revisions and trash entries. The memory write path (apps/memories/services) calls
this inside its own transaction, so a change and its revision commit or roll back together.

This module imports only models: the write path depends on it, never the other way round
(apps/history/services.py, which restores, sits above the write path).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.utils import timezone

from apps.access.models import ApiToken
from apps.memories.models import CausalEdge, Memory

from .models import Action, Door, MemoryRevision, TrashEntry

# The fields a revision tracks: what a person or an assistant can change about a memory.
TRACKED = (
    "title",
    "content",
    "category",
    "tags",
    "file_path",
    "source",
    "trigger_phrases",
    "tier",
    "importance",
    "metadata",
    "archived",
)
# Columns a trash entry keeps besides TRACKED, so a restored row is the row that was deleted.
KEPT = (
    "external_id",
    "content_hash",
    "embedding_model",
    "pagerank_score",
    "stability",
    "access_count",
    "created_at",
    "updated_at",
    "last_accessed_at",
)
Actor = AbstractBaseUser | ApiToken | AnonymousUser | None


@dataclass(frozen=True)
class Change:
    """One memory's change, before it is stamped with actor, door and time."""

    memory_id: Any
    namespace_id: int
    action: str
    before: dict | None = None
    after: dict | None = None


def actor_fields(actor: Actor, door: str) -> dict[str, Any]:
    """Who and through which door, as MemoryRevision columns. An unknown door is a bug."""
    if door not in Door.values:
        raise ValueError(f"Unknown door {door!r}; one of {', '.join(Door.values)}.")
    if isinstance(actor, ApiToken):
        label = f"token {actor.name} ({actor.prefix}…)"
        return {"actor_token": actor, "actor_user": None, "actor_label": label, "door": door}
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


def memory_state(memory: Memory, tags: Iterable[str] | None = None) -> dict[str, Any]:
    """The tracked fields of `memory`, JSON-safe. Pass `tags` when already known (no query)."""
    state = {name: getattr(memory, name) for name in TRACKED if name != "tags"}
    state["trigger_phrases"] = list(state["trigger_phrases"] or [])
    state["metadata"] = dict(state["metadata"] or {})
    names = tags if tags is not None else (t.name for t in memory.tags.all())
    state["tags"] = sorted(set(names))
    return state


def diff_states(before: dict, after: dict) -> tuple[dict, dict]:
    """Only the fields that differ, as (before, after)."""
    changed = [k for k in after if before.get(k) != after[k]]
    return {k: before.get(k) for k in changed}, {k: after[k] for k in changed}


def update_action(after: dict) -> str:
    """Name a field change: a lone tier or archived flag is its own kind of change."""
    if set(after) == {"tier"}:
        return Action.TIER
    if set(after) == {"archived"}:
        return Action.ARCHIVE if after["archived"] else Action.UNARCHIVE
    return Action.UPDATE


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
    if rows:
        MemoryRevision.objects.bulk_create(rows, batch_size=1000)
    return rows


def record_one(
    memory: Memory, action: str, before: dict | None, after: dict | None, *, actor, door
) -> MemoryRevision:
    change = Change(memory.pk, memory.namespace_id, action, before, after)
    return record([change], actor=actor, door=door)[0]


def edge_dict(edge: CausalEdge) -> dict[str, Any]:
    return {
        "source": str(edge.source_id),
        "target": str(edge.target_id),
        "relation": edge.relation,
        "strength": edge.strength,
        "created_at": edge.created_at.isoformat(),
    }


def edge_changes(edge: CausalEdge, action: str) -> list[Change]:
    """A link or unlink shows in the history of both ends."""
    data = {"edge": edge_dict(edge)}
    before, after = (None, data) if action == Action.LINK else (data, None)
    return [
        Change(end, edge.namespace_id, action, before, after)
        for end in (edge.source_id, edge.target_id)
    ]


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
        defaults={
            "namespace_id": memory.namespace_id,
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


def states_for_created(rows: Sequence[tuple[Memory, Iterable[str]]]) -> list[Change]:
    """Creation revisions of freshly inserted rows with their tag names (no queries)."""
    return [
        Change(row.pk, row.namespace_id, Action.CREATE, None, memory_state(row, tags))
        for row, tags in rows
    ]
