"""The Re-check queue: memories whose basis changed (apps/memories/recheck.py marks them).

A curator confirms a memory still holds (its marks go, recorded as a "decision" revision that
the history's undo takes back: the marks return), or edits, supersedes or archives it through
the ordinary write path (each a revision with its own undo). An archived or superseded memory
leaves the queue; its marks stay, so undoing the archive brings it back.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from apps.access.permissions import Action, can
from apps.core.exceptions import PermissionDenied, ValidationFailed
from apps.history.models import MemoryRevision
from apps.memories.models import Memory, Namespace, RecheckMark
from apps.memories.recheck import mark_dict
from apps.memories.revisions import Action as Revision
from apps.memories.revisions import Change, record

QUEUE = "recheck"


def recheck_memories(*, namespace: Namespace):
    """Live memories with a re-check mark, the most recently marked first."""
    now = timezone.now()
    marked = RecheckMark.objects.filter(memory=OuterRef("pk"))
    return (
        Memory.objects.in_namespace(namespace)
        .active()
        .filter(Q(valid_until__isnull=True) | Q(valid_until__gt=now))
        .filter(Exists(marked))
        .prefetch_related("recheck_marks")
        .order_by("-updated_at", "id")
    )


def recheck_count(*, namespace: Namespace) -> int:
    return recheck_memories(namespace=namespace).count()


@transaction.atomic
def recheck_confirm(*, memory: Memory, actor=None, door: str = "system") -> MemoryRevision:
    """The memory still holds: its marks go. Returns the decision revision (its undo puts the
    marks back)."""
    if actor is not None and not can(actor, memory.namespace_id, Action.CHANGE):
        raise PermissionDenied("You may not change memories in this namespace.")
    marks = list(RecheckMark.objects.select_for_update().filter(memory=memory))
    if not marks:
        raise ValidationFailed({"memory": "This memory is not waiting for re-check."})
    decision = {
        "queue": QUEUE,
        "outcome": "confirmed",
        "ref": str(memory.pk),
        "memories": [str(memory.pk)],
        "namespace": memory.namespace_id,
        "kept": None,
        "archived": False,
        "note": "",
        "marks": [{**mark_dict(m), "token": m.token} for m in marks],
    }
    RecheckMark.objects.filter(pk__in=[m.pk for m in marks]).delete()
    change = Change(memory.pk, memory.namespace_id, Revision.DECISION, None, {"decision": decision})
    record([change], actor=actor, door=door)
    return MemoryRevision.objects.filter(memory_id=memory.pk, action=Revision.DECISION).latest("id")


def confirm_in_effect(revision: MemoryRevision) -> bool:
    """A confirmation can be taken back while its memory exists and none of the marks it took
    away came back meanwhile."""
    decision = revision.after["decision"]
    here = {"namespace_id": revision.namespace_id}
    if not Memory.objects.filter(pk=revision.memory_id, **here).exists():
        return False
    bases = [m["basis"] for m in decision.get("marks", [])]
    return not RecheckMark.objects.filter(memory_id=revision.memory_id, basis_id__in=bases).exists()


def confirm_undo(revision: MemoryRevision) -> None:
    """Put back the marks a confirmation took away (the caller records the undo)."""
    decision = revision.after["decision"]
    RecheckMark.objects.bulk_create(
        [
            RecheckMark(
                namespace_id=revision.namespace_id,
                memory_id=revision.memory_id,
                basis_id=m["basis"],
                basis_title=m["basis_title"],
                reason=m["reason"],
                token=m.get("token", ""),
                depth=m.get("depth", 1),
                marked_at=parse_datetime(m["marked_at"]),
            )
            for m in decision.get("marks", [])
        ],
        ignore_conflicts=True,
    )
