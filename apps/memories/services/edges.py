"""Links between memories of one namespace."""

from __future__ import annotations

from django.db import transaction

from apps.core.exceptions import ValidationFailed

from .. import constitutional, recheck, revisions
from ..jobs import graph_changed
from ..models import CausalEdge, Memory, RecheckReason, Relation
from ..supersession import end_validity, reopen_validity
from ..validation import validate_relation
from ..write_links import resolve_for

# --- edges -------------------------------------------------------------------------------------


@transaction.atomic
def edge_create(
    *,
    source: Memory,
    target: Memory,
    relation: str,
    strength: float = 1.0,
    actor: revisions.Actor = None,
    door: str = "system",
    confirm_constitutional: bool = False,
) -> CausalEdge:
    """Link two memories of one namespace; linking again updates the strength. Superseding a
    constitutional memory needs an owner's confirmation (apps/memories/constitutional.py)."""
    relation, strength = validate_relation(relation, strength)
    if source.pk == target.pk:
        raise ValidationFailed({"target": "A memory cannot be linked to itself."})
    if source.namespace_id != target.namespace_id:
        raise ValidationFailed(
            {"target": "Belongs to another namespace; links stay within one namespace."}
        )
    existing: CausalEdge | None = CausalEdge.objects.filter(
        source=source, target=target, relation=relation
    ).first()
    if existing is not None and existing.strength == strength:
        return existing
    edge, _ = CausalEdge.objects.update_or_create(
        source=source,
        target=target,
        relation=relation,
        defaults={"strength": strength, "namespace_id": source.namespace_id},
    )
    changes = revisions.edge_changes(edge, revisions.Action.LINK)
    if existing is not None:  # a new strength: show the old one as "before"
        old = {"edge": revisions.edge_dict(existing)}
        changes = [
            revisions.Change(c.memory_id, c.namespace_id, c.action, old, c.after) for c in changes
        ]
    if relation == Relation.SUPERSEDES and existing is None:
        if constitutional.guard(
            [target], actor=actor, confirmed=confirm_constitutional, what="Superseding"
        ):
            changes = [
                revisions.Change(
                    c.memory_id,
                    c.namespace_id,
                    c.action,
                    c.before,
                    {**(c.after or {}), **constitutional.RISK},
                )
                if c.memory_id == target.pk
                else c
                for c in changes
            ]
        # Superseding ends the older memory's validity where the newer one's begins.
        locked = Memory.objects.select_for_update().get(pk=target.pk)
        ended = end_validity(locked, source)
        if ended is not None:
            target.valid_until = locked.valid_until
            changes.append(ended)
        recheck.mark([recheck.superseded(locked, source)])
    revisions.record(changes, actor=actor, door=door)
    transaction.on_commit(lambda: graph_changed(source.namespace_id))
    return edge


@transaction.atomic
def edge_delete(*, edge: CausalEdge, actor: revisions.Actor = None, door: str = "system") -> None:
    namespace_id = edge.namespace_id
    changes = revisions.edge_changes(edge, revisions.Action.UNLINK)
    edge.delete()
    if edge.relation == Relation.SUPERSEDES:
        # Without its successor the older memory holds again.
        older = Memory.objects.select_for_update().filter(pk=edge.target_id).first()
        newer = Memory.objects.filter(pk=edge.source_id).first()
        reopened = reopen_validity(older, newer) if older and newer else None
        # The supersession is taken back: the marks it made on what rests on `older` go.
        recheck.clear(
            basis_id=edge.target_id, reason=RecheckReason.SUPERSEDED, token=str(edge.source_id)
        )
        if reopened is not None:
            changes.append(reopened)
    revisions.record(changes, actor=actor, door=door)
    transaction.on_commit(lambda: graph_changed(namespace_id))


@transaction.atomic
def memory_links_add(
    *,
    memory: Memory,
    caused_by: list[str] | None = None,
    depends_on: list[str] | None = None,
    actor: revisions.Actor = None,
    door: str = "system",
) -> list[CausalEdge]:
    """Add `caused_by` / `depends_on` links to a stored memory (the edit form), checked like
    the create's: ids of its namespace (a 400 naming the field otherwise), each a revision."""
    asked = {k: v for k, v in (("caused_by", caused_by), ("depends_on", depends_on)) if v}
    edges = []
    for name, other in resolve_for(memory, asked):
        source, target = (other, memory) if name == "caused_by" else (memory, other)
        relation = Relation.CAUSED if name == "caused_by" else Relation.DEPENDS_ON
        edges.append(
            edge_create(source=source, target=target, relation=relation, actor=actor, door=door)
        )
    return edges
