"""Links between memories of one namespace."""

from __future__ import annotations

from django.db import transaction

from apps.core.exceptions import ValidationFailed
from apps.jobs import triggers

from ..models import CausalEdge, Memory
from ..validation import validate_relation

# --- edges -------------------------------------------------------------------------------------


@transaction.atomic
def edge_create(
    *, source: Memory, target: Memory, relation: str, strength: float = 1.0
) -> CausalEdge:
    """Link two memories of one namespace; linking again updates the strength."""
    relation, strength = validate_relation(relation, strength)
    if source.pk == target.pk:
        raise ValidationFailed({"target": "A memory cannot be linked to itself."})
    if source.namespace_id != target.namespace_id:
        raise ValidationFailed(
            {"target": "Belongs to another namespace; links stay within one namespace."}
        )
    edge, _ = CausalEdge.objects.update_or_create(
        source=source,
        target=target,
        relation=relation,
        defaults={"strength": strength, "namespace_id": source.namespace_id},
    )
    transaction.on_commit(lambda: triggers.graph_changed(source.namespace_id))
    return edge


@transaction.atomic
def edge_delete(*, edge: CausalEdge) -> None:
    namespace_id = edge.namespace_id
    edge.delete()
    transaction.on_commit(lambda: triggers.graph_changed(namespace_id))
