"""Taking a supersession back (the history's undo of a "supersede" revision)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import transaction

from apps.core.exceptions import ValidationFailed

from .. import revisions
from ..models import CausalEdge, Memory, Relation
from ..supersession import iso
from .change import memory_update
from .edges import edge_delete

if TYPE_CHECKING:  # the history app sits above this one; only its type is named
    from apps.history.models import MemoryRevision


def supersede_undoable(revision: MemoryRevision, memory: Memory) -> bool:
    """A "supersede" revision can be taken back while the memory still ends where it set."""
    if revision.action != revisions.Action.SUPERSEDE or not revision.after:
        return False
    return bool(iso(memory.valid_until) == revision.after.get("valid_until"))


@transaction.atomic
def supersede_undo(
    *, revision: MemoryRevision, actor: revisions.Actor = None, door: str = "system"
) -> Memory:
    """Re-open a superseded memory: the `supersedes` link from its successor goes and its
    valid_until returns to what it was (each a revision of its own)."""
    memory = (
        Memory.objects.select_for_update()
        .filter(pk=revision.memory_id, namespace_id=revision.namespace_id)
        .first()
    )
    if memory is None or not supersede_undoable(revision, memory):
        raise ValidationFailed({"revision": "This supersession was already undone or changed."})
    edge = CausalEdge.objects.filter(
        source_id=(revision.after or {}).get("superseded_by"),
        target_id=memory.pk,
        relation=Relation.SUPERSEDES,
    ).first()
    if edge is not None:
        edge_delete(edge=edge, actor=actor, door=door)
        memory.refresh_from_db()
    return memory_update(
        memory=memory,
        valid_until=(revision.before or {}).get("valid_until"),
        actor=actor,
        door=door,
    )
