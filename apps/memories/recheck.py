"""What rests on a changed memory, marked for re-check (SPEC section 9).

A memory rests on another when it has a `depends_on` link to it, or the other `caused` it.
When a memory is superseded, deleted or its content edited, the memories resting on it,
directly or through up to MEMORY_RECHECK_DEPTH such links, get a RecheckMark in the same
transaction as the change. One recursive query finds them (index probes on the edge's two
ends), so a memory nothing rests on costs that one query and nothing else.

Taking the change back clears exactly the marks it made: each mark carries a token naming the
change (see RecheckMark), and the undo paths call `clear` with the same token.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.conf import settings
from django.db import connection
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from .models import CausalEdge, Memory, RecheckMark, RecheckReason, Relation

__all__ = ["Basis", "clear", "mark", "mark_edit", "mark_dict"]

# Each step follows a `depends_on` link backwards (who depends on this) and a `caused` link
# forwards (what this caused); UNION drops repeated (root, memory, depth) rows and the depth
# bound ends every cycle.
_WALK = f"""
resting(root, id, depth) AS (
    SELECT r, r, 0 FROM unnest(%(roots)s::uuid[]) AS r
  UNION
    SELECT resting.root, next.id, resting.depth + 1
      FROM resting
      CROSS JOIN LATERAL (
        SELECT e.source_id AS id FROM {CausalEdge._meta.db_table} e
         WHERE e.target_id = resting.id AND e.relation = '{Relation.DEPENDS_ON}'
        UNION ALL
        SELECT e.target_id FROM {CausalEdge._meta.db_table} e
         WHERE e.source_id = resting.id AND e.relation = '{Relation.CAUSED}'
      ) AS next
     WHERE resting.depth < %(depth)s
)"""
_FOUND = f"""
SELECT resting.root, resting.id, min(resting.depth)
  FROM resting
  JOIN {Memory._meta.db_table} m ON m.id = resting.id AND NOT m.archived
 WHERE resting.depth > 0 AND NOT resting.id = ANY(%(roots)s::uuid[])
 GROUP BY resting.root, resting.id"""
_RESTING_ON = f"WITH RECURSIVE {_WALK}{_FOUND}"
# An edit in one statement: the marks made against the text the memory now holds again go (an
# undo, a restore), and what rests on it is found; the row without a root counts what went.
_AFTER_EDIT = f"""
WITH RECURSIVE cleared AS (
    DELETE FROM {RecheckMark._meta.db_table}
     WHERE basis_id = %(basis)s AND reason = '{RecheckReason.EDITED}' AND token = %(token)s
    RETURNING 1
), {_WALK}
SELECT NULL::uuid, NULL::uuid, (SELECT count(*) FROM cleared)::int
UNION ALL ({_FOUND})
"""


@dataclass(frozen=True)
class Basis:
    """A memory that changed, why, and the token of the change (see RecheckMark)."""

    memory_id: uuid.UUID
    namespace_id: int
    reason: str
    token: str = ""
    title: str = ""


def depth_bound() -> int:
    return max(1, settings.MEMORY_RECHECK_DEPTH)


def resting_on(roots: Sequence[uuid.UUID]) -> list[tuple[uuid.UUID, uuid.UUID, int]]:
    """(root, memory, depth) for every unarchived memory resting on one of `roots`."""
    if not roots:
        return []
    with connection.cursor() as cur:
        cur.execute(_RESTING_ON, {"roots": [str(r) for r in roots], "depth": depth_bound()})
        return [(_as_uuid(a), _as_uuid(b), d) for a, b, d in cur.fetchall()]


def mark(bases: Iterable[Basis]) -> list[RecheckMark]:
    """Mark what rests on each changed memory; returns the marks this call added (a memory
    already marked for the same basis and reason keeps its older mark)."""
    by_root = {b.memory_id: b for b in bases}
    return _add(by_root, resting_on(list(by_root)))


def mark_edit(memory: Memory, hash_before: str) -> list[RecheckMark]:
    """`memory`'s content changed (its content_hash is the new one's). When the new text is
    the one its dependents were marked against, those marks go and nothing is marked; else
    what rests on it is marked against the text it had. One statement either way."""
    with connection.cursor() as cur:
        cur.execute(
            _AFTER_EDIT,
            {
                "roots": [str(memory.pk)],
                "depth": depth_bound(),
                "basis": memory.pk,
                "token": memory.content_hash,
            },
        )
        rows = cur.fetchall()
    if any(root is None and cleared for root, _, cleared in rows):
        return []
    found = [(_as_uuid(a), _as_uuid(b), d) for a, b, d in rows if a is not None]
    return _add({memory.pk: edited(memory, hash_before)}, found)


def _as_uuid(value) -> uuid.UUID:
    return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))


def _add(by_root: dict, found: list[tuple[uuid.UUID, uuid.UUID, int]]) -> list[RecheckMark]:
    if not found:
        return []
    now = timezone.now()
    marks = [
        RecheckMark(
            namespace_id=by_root[root].namespace_id,
            memory_id=memory_id,
            basis_id=root,
            basis_title=by_root[root].title[:300],
            reason=by_root[root].reason,
            token=by_root[root].token,
            depth=depth,
            marked_at=now,
        )
        for root, memory_id, depth in found
        # The successor may itself rest on what it replaces: it is the change, not affected.
        if not (
            by_root[root].reason == RecheckReason.SUPERSEDED
            and by_root[root].token == str(memory_id)
        )
    ]
    before = set(
        RecheckMark.objects.filter(
            basis_id__in=list(by_root), memory_id__in={m.memory_id for m in marks}
        ).values_list("memory_id", "basis_id", "reason")
    )
    added = [m for m in marks if (m.memory_id, m.basis_id, m.reason) not in before]
    RecheckMark.objects.bulk_create(added, ignore_conflicts=True)
    return added


def clear(*, basis_id, reason: str, token: str | None = None) -> int:
    """Take back the marks one change made (its basis, reason and token); returns how many."""
    found = RecheckMark.objects.filter(basis_id=basis_id, reason=reason)
    if token is not None:
        found = found.filter(token=token)
    return found.delete()[0]


def superseded(older: Memory, newer: Memory) -> Basis:
    return Basis(
        older.pk, older.namespace_id, RecheckReason.SUPERSEDED, str(newer.pk), _title(older)
    )


def deleted(memory: Memory) -> Basis:
    return Basis(memory.pk, memory.namespace_id, RecheckReason.DELETED, "", _title(memory))


def edited(memory: Memory, hash_before: str) -> Basis:
    return Basis(memory.pk, memory.namespace_id, RecheckReason.EDITED, hash_before, _title(memory))


def _title(memory: Memory) -> str:
    return memory.title or memory.content[:120]


def mark_dict(mark: RecheckMark) -> dict:
    """A mark as the doors show it."""
    return {
        "basis": str(mark.basis_id),
        "basis_title": mark.basis_title,
        "reason": mark.reason,
        "marked_at": mark.marked_at.isoformat(),
        "depth": mark.depth,
    }


# --- export and import (apps/transfer/exporting.py, transfer.py) -------------------------------


def marks_for_export(memories: Sequence[Memory]) -> dict[uuid.UUID, list[dict]]:
    """Each memory's marks as an export record's "needs_recheck", bases and successors named by
    their public ids (what the export calls them), in two queries."""
    marks = list(
        RecheckMark.objects.filter(memory_id__in=[m.pk for m in memories]).order_by("marked_at")
    )
    if not marks:
        return {}
    named = {m.basis_id for m in marks} | {
        uuid.UUID(m.token) for m in marks if m.reason == RecheckReason.SUPERSEDED and m.token
    }
    public = {
        pk: external or str(pk)
        for pk, external in Memory.objects.filter(pk__in=named).values_list("id", "external_id")
    }
    out: dict[uuid.UUID, list[dict]] = {}
    for m in marks:
        token = m.token
        if m.reason == RecheckReason.SUPERSEDED and token:
            token = public.get(uuid.UUID(token), token)
        out.setdefault(m.memory_id, []).append(
            {**mark_dict(m), "basis": public.get(m.basis_id, str(m.basis_id)), "token": token}
        )
    return out


def check_exported(value, label: str) -> dict[str, list[str]]:
    """Problems of a record's "needs_recheck", by "label.needs_recheck[i]"."""
    if value is None:
        return {}
    if not isinstance(value, list):
        return {f"{label}.needs_recheck": ["Must be a list."]}
    errors = {}
    for i, item in enumerate(value):
        ok = (
            isinstance(item, dict)
            and isinstance(item.get("basis"), str)
            and item.get("reason") in RecheckReason.values
        )
        if not ok:
            errors[f"{label}.needs_recheck[{i}]"] = [
                "Must be an object with basis (an id) and reason (superseded, deleted, edited)."
            ]
    return errors


def marks_import(namespace_id: int, records: Sequence[dict], lookup: dict[str, uuid.UUID]) -> int:
    """Restore the marks of imported records (ids through `lookup`, the namespace's public and
    stored ids); a basis not in the namespace any more keeps its id, as a deleted one does."""
    rows = []
    for record in records:
        memory_id = lookup.get(str(record.get("id")))
        for item in record.get("needs_recheck") or ():
            if memory_id is None:
                continue
            basis = lookup.get(item["basis"]) or _uuid_or_none(item["basis"])
            if basis is None:
                continue  # a basis named only by an external id that is not here
            token = str(item.get("token") or "")
            if item["reason"] == RecheckReason.SUPERSEDED and token in lookup:
                token = str(lookup[token])
            rows.append(
                RecheckMark(
                    namespace_id=namespace_id,
                    memory_id=memory_id,
                    basis_id=basis,
                    basis_title=str(item.get("basis_title") or "")[:300],
                    reason=item["reason"],
                    token=token[:64],
                    depth=int(item.get("depth") or 1),
                    marked_at=parse_datetime(str(item.get("marked_at") or "")) or timezone.now(),
                )
            )
    return len(RecheckMark.objects.bulk_create(rows, ignore_conflicts=True))


def _uuid_or_none(value: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(value)
    except ValueError:
        return None
