"""Supersession: a newer memory ends older ones' validity (SPEC sections 2 and 3).

Closing is part of the write that creates the successor (apps/memories/services/create.py) or
of a curator's decision (apps/queues); either way the older memory's valid_until becomes the
successor's valid_from, a `supersedes` link joins them, and a "supersede" revision on the older
memory keeps what its valid_until was, so one undo re-opens it and drops the link.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from apps.core.exceptions import ValidationFailed

from .. import revisions
from ..jobs import graph_changed
from ..models import CausalEdge, Memory, Namespace, Relation
from ..validation import MemoryInput

# The module, not the name: change.py imports create.py, which imports this module.
from . import change
from .edges import edge_delete


def resolve_superseded(
    namespace: Namespace, inputs: Sequence[MemoryInput], prefix: str | None
) -> dict[int, list[Memory]]:
    """Item index -> the memories its `supersedes` names (by id, or by external id), each one
    checked: in this namespace, not archived, valid before the new memory starts."""
    refs = {i: inp.supersedes for i, inp in enumerate(inputs) if inp.supersedes}
    if not refs:
        return {}
    wanted = {r for rs in refs.values() for r in rs}
    uuids = {r for r in wanted if _is_uuid(r)}
    found = Memory.objects.in_namespace(namespace).filter(
        Q(pk__in=uuids) | Q(external_id__in=wanted)
    )
    by_ref: dict[str, Memory] = {}
    for memory in found:
        by_ref[str(memory.pk)] = memory
        if memory.external_id:
            by_ref.setdefault(memory.external_id, memory)
    errors: dict[str, str] = {}
    out: dict[int, list[Memory]] = {}
    for i, items in refs.items():
        base = f"{prefix}[{i}].supersedes" if prefix else "supersedes"
        for j, ref in enumerate(items):
            memory = by_ref.get(str(uuid.UUID(ref)) if ref in uuids else ref)
            start = inputs[i].valid_from or inputs[i].created_at or timezone.now()
            if memory is None:
                errors[f"{base}[{j}]"] = f"No memory {ref[:80]!r} in this namespace."
            elif memory.archived:
                errors[f"{base}[{j}]"] = f"Memory {ref[:80]!r} is archived."
            elif memory.effective_valid_from > start:
                errors[f"{base}[{j}]"] = (
                    f"Memory {ref[:80]!r} became valid after this one does; "
                    "a memory can only supersede an earlier fact."
                )
            elif memory not in out.setdefault(i, []):
                out[i].append(memory)
    if errors:
        raise ValidationFailed(errors)
    return out


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def close_validity(
    *, newer: Memory, older: Sequence[Memory], now: datetime | None = None
) -> tuple[list[CausalEdge], list[revisions.Change]]:
    """End `older` where `newer` begins (locking their rows) and build the `supersedes` edges
    and the changes to record. The caller saves the edges and records the changes in its own
    transaction. A memory that already ends sooner keeps its end."""
    ends = newer.effective_valid_from
    locked = Memory.objects.select_for_update().filter(pk__in=[m.pk for m in older])
    edges, changes = [], []
    for memory in locked.order_by("pk"):
        before = memory.valid_until
        if before is None or before > ends:
            Memory.objects.filter(pk=memory.pk).update(valid_until=ends, updated_at=timezone.now())
            memory.valid_until = ends
        after = {"valid_until": _iso(memory.valid_until), "superseded_by": str(newer.pk)}
        changes.append(
            revisions.Change(
                memory.pk,
                memory.namespace_id,
                revisions.Action.SUPERSEDE,
                {"valid_until": _iso(before)},
                after,
            )
        )
        edge = CausalEdge(
            namespace_id=newer.namespace_id,
            source=newer,
            target=memory,
            relation=Relation.SUPERSEDES,
            strength=1.0,
            created_at=now or timezone.now(),
        )
        edges.append(edge)
        changes.extend(revisions.edge_changes(edge, revisions.Action.LINK))
    return edges, changes


@transaction.atomic
def memories_supersede(
    *, newer: Memory, older: Sequence[Memory], actor: revisions.Actor = None, door: str = "system"
) -> list[Memory]:
    """`newer` supersedes each of `older` (same namespace, earlier facts): their validity
    ends where `newer` begins, linked and recorded; what a queue's "supersede" calls."""
    for memory in older:
        if memory.pk == newer.pk or memory.namespace_id != newer.namespace_id:
            raise ValidationFailed({"supersedes": "Pick another memory of this namespace."})
        if memory.effective_valid_from > newer.effective_valid_from:
            raise ValidationFailed(
                {"supersedes": "The superseded memory became valid after its successor."}
            )
    edges, changes = close_validity(newer=newer, older=older)
    CausalEdge.objects.bulk_create(edges, ignore_conflicts=True)
    revisions.record(changes, actor=actor, door=door)
    transaction.on_commit(lambda: graph_changed(newer.namespace_id))
    return list(older)


def supersede_undoable(revision, memory: Memory) -> bool:
    """A "supersede" revision can be taken back while the memory still ends where it set."""
    if revision.action != revisions.Action.SUPERSEDE or not revision.after:
        return False
    return _iso(memory.valid_until) == revision.after.get("valid_until")


@transaction.atomic
def supersede_undo(*, revision, actor: revisions.Actor = None, door: str = "system") -> Memory:
    """Re-open a superseded memory: its valid_until returns to what it was and the
    `supersedes` link from its successor goes (each a revision of its own)."""
    memory = Memory.objects.select_for_update().filter(pk=revision.memory_id).first()
    if memory is None or not supersede_undoable(revision, memory):
        raise ValidationFailed({"revision": "This supersession was already undone or changed."})
    edge = CausalEdge.objects.filter(
        source_id=revision.after.get("superseded_by"),
        target_id=memory.pk,
        relation=Relation.SUPERSEDES,
    ).first()
    if edge is not None:
        edge_delete(edge=edge, actor=actor, door=door)
    return change.memory_update(
        memory=memory, valid_until=revision.before.get("valid_until"), actor=actor, door=door
    )


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None
