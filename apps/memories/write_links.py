"""Links a write draws from the memory it stores: `caused_by` and `depends_on`.

Checked like `supersedes` (apps/memories/supersession.py): every id names a memory of the
write's namespace (by id or external id), or the write fails whole with the field named.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime

from django.db.models import Q

from apps.core.exceptions import ValidationFailed
from apps.core.values import is_uuid

from . import revisions
from .fields import WRITE_LINKS
from .models import CausalEdge, Memory, Namespace
from .validation import MemoryInput

# item index -> [(field, memory)]
Resolved = dict[int, list[tuple[str, Memory]]]


def resolve_links(
    namespace: Namespace, inputs: Sequence[MemoryInput], prefix: str | None
) -> Resolved:
    """Item index -> the memories its `caused_by` and `depends_on` name, each checked to be
    a memory of this namespace (archived ones too: a decision may rest on an old fact)."""
    refs = {
        (i, name): getattr(inp, name)
        for i, inp in enumerate(inputs)
        for name in WRITE_LINKS
        if getattr(inp, name)
    }
    if not refs:
        return {}
    found = _lookup(namespace, {r for rs in refs.values() for r in rs})
    errors: dict[str, str] = {}
    out: Resolved = {}
    for (i, name), items in refs.items():
        base = f"{prefix}[{i}].{name}" if prefix else name
        for j, ref in enumerate(items):
            memory = found.get(_key(ref))
            if memory is None:
                errors[f"{base}[{j}]"] = f"No memory {ref[:80]!r} in this namespace."
            elif (name, memory) not in out.setdefault(i, []):
                out[i].append((name, memory))
    if errors:
        raise ValidationFailed(errors)
    return out


def resolve_for(memory: Memory, links: dict[str, list[str]]) -> list[tuple[str, Memory]]:
    """The same check for links added to a stored memory (the edit form): ids of its own
    namespace, never itself."""
    found = _lookup(memory.namespace, {r for rs in links.values() for r in rs})
    errors: dict[str, str] = {}
    out = []
    for name, items in links.items():
        for j, ref in enumerate(items):
            other = found.get(_key(ref))
            if other is None:
                errors[f"{name}[{j}]"] = f"No memory {ref[:80]!r} in this namespace."
            elif other.pk == memory.pk:
                errors[f"{name}[{j}]"] = "A memory cannot be linked to itself."
            elif (name, other) not in out:
                out.append((name, other))
    if errors:
        raise ValidationFailed(errors)
    return out


def link_edges(
    memory: Memory, links: Sequence[tuple[str, Memory]], now: datetime
) -> tuple[list[CausalEdge], list[revisions.Change]]:
    """The edges `links` draw from `memory` and the "link" changes to record (both ends)."""
    edges, changes = [], []
    for name, other in links:
        if other.pk == memory.pk:
            continue  # a stored text named as its own cause: nothing to link
        relation, memory_is_source = WRITE_LINKS[name]
        source, target = (memory, other) if memory_is_source else (other, memory)
        edge = CausalEdge(
            namespace_id=memory.namespace_id,
            source=source,
            target=target,
            relation=relation,
            strength=1.0,
            created_at=now,
        )
        edges.append(edge)
        changes.extend(revisions.edge_changes(edge, revisions.Action.LINK))
    return edges, changes


def _lookup(namespace: Namespace, wanted: set[str]) -> dict[str, Memory]:
    uuids = {r for r in wanted if is_uuid(r)}
    by_ref: dict[str, Memory] = {}
    for memory in Memory.objects.in_namespace(namespace).filter(
        Q(pk__in=uuids) | Q(external_id__in=wanted)
    ):
        by_ref[str(memory.pk)] = memory
        if memory.external_id:
            by_ref.setdefault(memory.external_id, memory)
    return by_ref


def _key(ref: str) -> str:
    return str(uuid.UUID(ref)) if is_uuid(ref) else ref
