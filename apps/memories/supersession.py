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

from django.db.models import F, Q
from django.utils import timezone

from apps.core.exceptions import ValidationFailed
from apps.core.values import is_uuid

from . import recheck, revisions
from .models import CausalEdge, Memory, Namespace, Relation
from .validation import MemoryInput


def resolve_superseded(
    namespace: Namespace, inputs: Sequence[MemoryInput], prefix: str | None
) -> dict[int, list[Memory]]:
    """Item index -> the memories its `supersedes` names (by id, or by external id), each one
    checked: in this namespace, not archived, valid before the new memory starts."""
    refs = {i: inp.supersedes for i, inp in enumerate(inputs) if inp.supersedes}
    if not refs:
        return {}
    wanted = {r for rs in refs.values() for r in rs}
    uuids = {r for r in wanted if is_uuid(r)}
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


def end_validity(older: Memory, newer: Memory) -> revisions.Change | None:
    """End `older` where `newer` begins (a memory that already ends sooner keeps its end) and
    return the "supersede" change to record; None when `older` started after `newer` (a link
    drawn backwards ends nothing)."""
    ends = newer.effective_valid_from
    if older.effective_valid_from > ends:
        return None
    before = older.valid_until
    if before is None or before > ends:
        Memory.objects.filter(pk=older.pk).update(
            valid_until=ends, updated_at=timezone.now(), version=F("version") + 1
        )
        older.valid_until = ends
    after = {"valid_until": iso(older.valid_until), "superseded_by": str(newer.pk)}
    return revisions.Change(
        older.pk,
        older.namespace_id,
        revisions.Action.SUPERSEDE,
        {"valid_until": iso(before)},
        after,
    )


def reopen_validity(older: Memory, newer: Memory) -> revisions.Change | None:
    """Undo `end_validity` when the `supersedes` link from `newer` goes: `older` holds again,
    unless another successor still ends it. Returns the change to record, if any."""
    if older.valid_until is None or older.valid_until != newer.effective_valid_from:
        return None
    others = CausalEdge.objects.filter(target=older, relation=Relation.SUPERSEDES).exclude(
        source=newer
    )
    if others.exists():
        return None
    before = iso(older.valid_until)
    Memory.objects.filter(pk=older.pk).update(
        valid_until=None, updated_at=timezone.now(), version=F("version") + 1
    )
    older.valid_until = None
    return revisions.Change(
        older.pk,
        older.namespace_id,
        revisions.Action.UPDATE,
        {"valid_until": before},
        {"valid_until": None},
    )


def close_validity(
    *, newer: Memory, older: Sequence[Memory | str], now: datetime | None = None
) -> tuple[list[CausalEdge], list[revisions.Change]]:
    """`newer` (being created) supersedes `older` (memories or ids): their rows locked and
    their validity ended, the `supersedes` edges built and the changes to record returned;
    the caller saves the edges and records the changes in its own transaction."""
    ids = [m.pk if isinstance(m, Memory) else m for m in older]
    edges, changes = [], []
    locked = list(Memory.objects.select_for_update().filter(pk__in=ids).order_by("pk"))
    # What rests on the replaced facts is marked for re-check in the same transaction.
    recheck.mark(recheck.superseded(memory, newer) for memory in locked)
    for memory in locked:
        ended = end_validity(memory, newer)
        if ended is not None:
            changes.append(ended)
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


def iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


CHAIN_MAX = 20  # links followed each way; a longer chain is cut, never looped


def validity_chain(memory: Memory, links: Sequence[CausalEdge] | None = None) -> list[Memory]:
    """`memory` with what it replaced and what replaced it, through `supersedes` links, oldest
    fact first: the timeline a memory's page shows. `links`: the memory's own links when the
    caller has them; without a `supersedes` one among them there is no timeline (no query)."""
    if links is not None and not any(e.relation == Relation.SUPERSEDES for e in links):
        return []
    seen = {memory.pk: memory}
    frontier = {memory.pk}
    for _ in range(CHAIN_MAX):
        links = CausalEdge.objects.filter(relation=Relation.SUPERSEDES).filter(
            Q(source_id__in=frontier) | Q(target_id__in=frontier)
        )
        reached = {i for pair in links.values_list("source_id", "target_id") for i in pair}
        frontier = reached - set(seen)
        if not frontier:
            break
        seen.update(Memory.objects.filter(pk__in=frontier).in_bulk())
    if len(seen) == 1:
        return []
    return sorted(seen.values(), key=lambda m: (m.effective_valid_from, m.created_at))
