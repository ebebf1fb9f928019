"""Putting a deleted memory back from the trash (apps/history keeps the entries and hands one
over; this module only needs its fields, see DeletedMemory).

The row returns exactly as it was deleted: same id, timestamps, counters and stored embedding
(no model call; a model change since is caught by the re-embed job). Its causal edges come back
where the other end still exists in the namespace; the others are skipped and reported.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from django.db import transaction
from django.utils.dateparse import parse_datetime

from apps.core.exceptions import ValidationFailed

from .. import dialog, passages, recheck, revisions
from ..jobs import graph_changed
from ..models import CausalEdge, Memory, RecheckReason
from .tags import tag_ids
from .unique_guard import unique_content_guard


class DeletedMemory(Protocol):
    """What the trash keeps of a deleted memory (apps.history.models.TrashEntry has these)."""

    memory_id: uuid.UUID
    namespace_id: int
    snapshot: dict[str, Any]
    tags: list[str]
    edges: list[dict[str, Any]]


@dataclass
class UndeleteResult:
    memory: Memory
    edges_restored: int = 0
    edges_skipped: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": str(self.memory.pk),
            "edges_restored": self.edges_restored,
            "edges_skipped": self.edges_skipped,
        }


@transaction.atomic
def memory_undelete(
    *, entry: DeletedMemory, actor: revisions.Actor = None, door: str = "system"
) -> UndeleteResult:
    """Put a deleted memory back with its id, tags and edges (the caller drops the entry)."""
    if Memory.every_state.filter(pk=entry.memory_id).exists():
        raise ValidationFailed({"entry": f"A memory with id {entry.memory_id} exists already."})
    snap = entry.snapshot
    external_id = snap.get("external_id")
    if (
        external_id
        and Memory.objects.filter(namespace_id=entry.namespace_id, external_id=external_id).exists()
    ):
        external_id = None  # taken meanwhile by an import; the uuid stays the identity
    memory = Memory(
        id=entry.memory_id,
        namespace_id=entry.namespace_id,
        external_id=external_id,
        embedding=snap.get("embedding"),
        # .get: an entry trashed before a tracked field existed restores it as its default.
        **{
            name: _value(name, snap[name])
            for name in revisions.TRACKED
            if name != "tags" and snap.get(name) is not None
        },
        **{
            name: _value(name, snap.get(name))
            for name in revisions.KEPT
            if name != "external_id" and snap.get(name) is not None
        },
    )
    # Past every version a client may still hold of the deleted row.
    memory.version = int(snap.get("version") or 1) + 1
    with unique_content_guard():  # its text stored again meanwhile: a 400, not a 500
        memory.save(force_insert=True)
    passages.store_passages([memory])  # deleted with the memory; written again from its text
    dialog.refresh([memory])
    ids = tag_ids(entry.tags)
    memory.tags.set([ids[name] for name in entry.tags])

    changes = [
        revisions.Change(
            memory.pk,
            memory.namespace_id,
            revisions.Action.UNDELETE,
            None,
            revisions.memory_state(memory, entry.tags),
        )
    ]
    result = UndeleteResult(memory)
    edges = _restorable_edges(entry, result)
    CausalEdge.objects.bulk_create(edges, ignore_conflicts=True)
    for edge in edges:
        other = edge.target_id if edge.source_id == memory.pk else edge.source_id
        data = {"edge": revisions.edge_dict(edge)}
        changes.append(
            revisions.Change(other, edge.namespace_id, revisions.Action.LINK, None, data)
        )
    result.edges_restored = len(edges)
    # The delete is taken back: the marks it made on what rested on this memory go.
    recheck.clear(basis_id=memory.pk, reason=RecheckReason.DELETED)
    revisions.record(changes, actor=actor, door=door)
    if edges:
        namespace_id = memory.namespace_id
        transaction.on_commit(lambda: graph_changed(namespace_id))
    return result


def _value(name: str, raw: object) -> object:
    if (name.endswith("_at") or name in revisions.INSTANTS) and isinstance(raw, str):
        return parse_datetime(raw)
    return raw


def _restorable_edges(entry: DeletedMemory, result: UndeleteResult) -> list[CausalEdge]:
    me = str(entry.memory_id)
    others = {e["target"] if e["source"] == me else e["source"] for e in entry.edges}
    alive = {
        str(pk)
        for pk in Memory.objects.filter(
            namespace_id=entry.namespace_id, pk__in=[uuid.UUID(o) for o in others]
        ).values_list("pk", flat=True)
    }
    edges: list[CausalEdge] = []
    for e in entry.edges:
        other = e["target"] if e["source"] == me else e["source"]
        if other not in alive:
            result.edges_skipped.append({**e, "reason": f"memory {other} no longer exists"})
            continue
        edges.append(
            CausalEdge(
                namespace_id=entry.namespace_id,
                source_id=uuid.UUID(e["source"]),
                target_id=uuid.UUID(e["target"]),
                relation=e["relation"],
                strength=e["strength"],
                # written by revisions.edge_dict as isoformat()
                created_at=datetime.fromisoformat(e["created_at"]),
            )
        )
    return edges
