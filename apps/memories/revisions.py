"""What the write path tells the history: memory fields as JSON-safe states, and the changes
between them. Storing them is the registered recorder's job (apps.core.changes, apps.history).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from apps.core.changes import Change, recorder
from apps.core.changes import ChangeAction as Action

from .fields import MemoryPatch
from .models import CausalEdge, Memory

__all__ = ["Action", "Actor", "Change"]

# A Django user, an ApiToken, or None (system and jobs); the recorder checks it.
Actor = Any

# The fields a revision tracks: what a person or an assistant can change about a memory (the
# fields of an update, apps.memories.fields.MemoryPatch) and whether it is archived.
TRACKED = (*MemoryPatch.model_fields, "archived")
# Tracked fields held as instants, kept in a revision as ISO 8601 text.
INSTANTS = ("valid_from", "valid_until")
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
    "version",
    # Provenance: a restored memory says where it came from, as before it was deleted.
    "origin_door",
    "origin_person",
    "origin_credential",
    "origin_client",
    "provenance",
)


def memory_state(memory: Memory, tags: Iterable[str] | None = None) -> dict[str, Any]:
    """The tracked fields of `memory`, JSON-safe. Pass `tags` when already known (no query)."""
    state = {name: getattr(memory, name) for name in TRACKED if name != "tags"}
    state["trigger_phrases"] = list(state["trigger_phrases"] or [])
    metadata = state["metadata"]
    # An odd stored value (a list or text written by SQL) is kept as it is, not a crash.
    state["metadata"] = dict(metadata or {}) if isinstance(metadata, dict | None) else metadata
    names = tags if tags is not None else (t.name for t in memory.tags.all())
    state["tags"] = sorted(set(names))
    for name in INSTANTS:
        moment = state[name]  # a datetime, or already text on a row rebuilt from a snapshot
        state[name] = moment.isoformat() if hasattr(moment, "isoformat") else moment
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


def states_for_created(rows: Sequence[tuple[Memory, Iterable[str]]]) -> list[Change]:
    """Creation revisions of freshly inserted rows with their tag names (no queries)."""
    return [
        Change(row.pk, row.namespace_id, Action.CREATE, None, memory_state(row, tags))
        for row, tags in rows
    ]


def record(changes: Iterable[Change], *, actor: Actor, door: str) -> None:
    """Hand `changes` to the recorder (one INSERT for all of them)."""
    recorder().record(list(changes), actor=actor, door=door)


def record_one(
    memory: Memory, action: str, before: dict | None, after: dict | None, *, actor, door
) -> None:
    record([Change(memory.pk, memory.namespace_id, action, before, after)], actor=actor, door=door)


def trash_put(memory: Memory, *, actor: Actor, door: str) -> int:
    """Keep `memory`'s last version in the trash (call before deleting it); returns its edges."""
    return recorder().trash(memory, actor=actor, door=door)
