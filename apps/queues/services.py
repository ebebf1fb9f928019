"""Decisions on the curator's queues. Memory changes go through the one write path
(apps.memories.services), so they are revisions the memory's history can undo; the queue's
own rows (DuplicatePair status, ConflictDecision) record the decision so the pair never comes
back."""

from __future__ import annotations

from django.db import transaction

from apps.access.permissions import Action, can
from apps.core.exceptions import PermissionDenied, ValidationFailed
from apps.history.models import MemoryRevision
from apps.history.selectors import revision_state_before
from apps.memories import constitutional
from apps.memories.models import CausalEdge, Memory, Relation, Tier
from apps.memories.revisions import TRACKED, Change, memory_state, record
from apps.memories.revisions import Action as Revision
from apps.memories.services import (
    edge_create,
    edge_delete,
    memories_archive,
    memories_merge,
    memories_unmerge,
    memory_archive,
    memory_update,
)

from . import recheck, review
from .models import ConflictDecision, ConflictStatus, DuplicatePair, PairStatus


def _may_change(namespace_id: int, actor) -> None:
    if actor is not None and not can(actor, namespace_id, Action.CHANGE):
        raise PermissionDenied("You may not change memories in this namespace.")


def _constitutional_guard(replaced: Memory, confirmed: bool, actor) -> None:
    """A constitutional memory (a rule the namespace holds to) is never replaced, merged away
    or archived by one click from a queue: an owner confirms it explicitly."""
    if replaced.tier != Tier.CONSTITUTIONAL:
        return
    if not confirmed:  # the queue's own words, asked first whoever clicks
        raise ValidationFailed(
            {
                "confirm_constitutional": "This would replace a constitutional memory: "
                "confirm it explicitly to go ahead."
            }
        )
    constitutional.require(replaced, actor=actor, confirmed=confirmed, what="Replacing")


def _check(pair: DuplicatePair, actor) -> None:
    _may_change(pair.namespace_id, actor)
    if pair.status != PairStatus.OPEN:
        raise ValidationFailed({"pair": "This pair has already been decided."})


def _kept_and_other(first: Memory, second: Memory, keep_id, field: str = "keep"):
    ids = {str(first.pk): first, str(second.pk): second}
    if str(keep_id) not in ids:
        raise ValidationFailed({field: "Choose one of the pair's two memories."})
    other = next(m for k, m in ids.items() if k != str(keep_id))
    return ids[str(keep_id)], other


@transaction.atomic
def pair_keep_both(*, pair: DuplicatePair, actor=None, door: str = "system") -> DuplicatePair:
    """Both memories stay as they are; the pair leaves the queue (a decision revision on both,
    which `decision_undo` takes back)."""
    _check(pair, actor)
    pair.status = PairStatus.KEPT_BOTH
    pair.save(update_fields=["status"])
    _record_decision(pair_decision(pair, PairStatus.KEPT_BOTH), actor=actor, door=door)
    return pair


@transaction.atomic
def pair_merge(
    *,
    pair: DuplicatePair,
    keep_id,
    content: str | None = None,
    confirm_constitutional: bool = False,
    actor=None,
    door: str = "system",
) -> Memory:
    """Keep one memory: it gains the other's tags and links and supersedes it (archived), via
    memories_merge; with `content`, the kept memory's text becomes that combined text (a
    second revision). Undone by `merge_undo` on the kept memory's merge revision."""
    _check(pair, actor)
    keep, other = _kept_and_other(pair.first, pair.second, keep_id)
    _constitutional_guard(other, confirm_constitutional, actor)
    kept = memories_merge(keep=keep, others=[other], move_edges=True, actor=actor, door=door)
    if content is not None and content.strip() and content != kept.content:
        kept = memory_update(memory=kept, content=content, actor=actor, door=door)
    pair.status = PairStatus.MERGED
    pair.save(update_fields=["status"])
    return kept


@transaction.atomic
def pair_supersede(
    *,
    pair: DuplicatePair,
    newer_id,
    confirm_constitutional: bool = False,
    actor=None,
    door: str = "system",
) -> Memory:
    """Mark one memory as superseding the other: a `supersedes` link, the older one archived
    (two revisions; unlink and "restore this version" undo them). Tags and links stay."""
    _check(pair, actor)
    newer, older = _kept_and_other(pair.first, pair.second, newer_id, field="newer")
    _constitutional_guard(older, confirm_constitutional, actor)
    archived = supersede(
        newer=newer, older=older, actor=actor, door=door, confirmed=confirm_constitutional
    )
    pair.status = PairStatus.SUPERSEDED
    pair.save(update_fields=["status"])
    decision = pair_decision(pair, PairStatus.SUPERSEDED, kept=newer, archived=archived)
    _record_decision(decision, actor=actor, door=door)
    return newer


def supersede(*, newer: Memory, older: Memory, actor, door: str, confirmed: bool = False) -> bool:
    """A `supersedes` link and the older memory archived; True when this archived it."""
    edge_create(
        source=newer,
        target=older,
        relation=Relation.SUPERSEDES,
        actor=actor,
        door=door,
        confirm_constitutional=confirmed,
    )
    if older.archived:
        return False
    memory_archive(memory=older, actor=actor, door=door, confirm_constitutional=confirmed)
    return True


def merge_revision(revision: MemoryRevision) -> bool:
    """Is this the kept memory's record of a merge (the one `merge_undo` takes)?"""
    return revision.action == "merge" and bool((revision.after or {}).get("merged"))


@transaction.atomic
def merge_undo(*, revision: MemoryRevision, actor=None, door: str = "system") -> list[Memory]:
    """Undo a merge from the kept memory's history: the merged memories come back, moved links
    return to them, the kept memory gets its fields from just before the merge, and a pair
    the queue had merged opens again. Every step is a revision."""
    if not merge_revision(revision):
        raise ValidationFailed({"revision": "This revision is not a merge."})
    keep = (
        Memory.objects.select_for_update()
        .filter(pk=revision.memory_id, namespace_id=revision.namespace_id)
        .first()
    )
    if keep is None:
        raise ValidationFailed({"revision": "The kept memory was deleted."})
    _may_change(keep.namespace_id, actor)
    before = revision_state_before(revision)
    current = memory_state(keep)
    restore = {k: before[k] for k in TRACKED if k in before and before[k] != current.get(k)}
    restore.pop("archived", None)
    back = memories_unmerge(
        keep=keep, merge_after=revision.after, restore=restore, actor=actor, door=door
    )
    for other in back:
        first, second = sorted([keep.pk, other.pk], key=str)
        DuplicatePair.objects.filter(
            first_id=first, second_id=second, status=PairStatus.MERGED
        ).update(status=PairStatus.OPEN)
    return back


# --- conflicts ---------------------------------------------------------------------------------


def _ordered(a: Memory, b: Memory) -> tuple[Memory, Memory]:
    return (a, b) if str(a.pk) < str(b.pk) else (b, a)


def _decide(first: Memory, second: Memory, status: str, note: str, actor) -> ConflictDecision:
    first, second = _ordered(first, second)
    if ConflictDecision.objects.filter(first=first, second=second).exists():
        raise ValidationFailed({"conflict": "This conflict has already been decided."})
    label = actor.get_username() if hasattr(actor, "get_username") else str(actor or "")
    return ConflictDecision.objects.create(
        namespace_id=first.namespace_id,
        first=first,
        second=second,
        status=status,
        note=note.strip(),
        decided_by=label[:150],
    )


def _conflict_pair(first: Memory, second: Memory, actor) -> None:
    if first.pk == second.pk or first.namespace_id != second.namespace_id:
        raise ValidationFailed({"conflict": "A conflict is two memories of one namespace."})
    _may_change(first.namespace_id, actor)


@transaction.atomic
def conflict_keep_one(
    *,
    keep: Memory,
    other: Memory,
    note: str = "",
    confirm_constitutional: bool = False,
    actor=None,
    door: str = "system",
) -> ConflictDecision:
    """The kept memory holds: it supersedes the other (link + archive, both revisions)."""
    _conflict_pair(keep, other, actor)
    _constitutional_guard(other, confirm_constitutional, actor)
    decision = _decide(keep, other, ConflictStatus.KEPT_ONE, note, actor)
    archived = supersede(
        newer=keep, older=other, actor=actor, door=door, confirmed=confirm_constitutional
    )
    found = conflict_decision(decision, kept=keep, archived=archived)
    _record_decision(found, actor=actor, door=door)
    return decision


@transaction.atomic
def conflict_supersede(
    *,
    newer: Memory,
    older: Memory,
    note: str = "",
    confirm_constitutional: bool = False,
    actor=None,
    door: str = "system",
) -> ConflictDecision:
    """The newer memory replaces the older one (a possible update confirmed): a `supersedes`
    link ends the older one's validity, which stays in history and in searches as of the
    past; nothing is archived. Undone like any decision (the link goes, validity re-opens)."""
    _conflict_pair(newer, older, actor)
    _constitutional_guard(older, confirm_constitutional, actor)
    decision = _decide(newer, older, ConflictStatus.SUPERSEDED, note, actor)
    edge_create(
        source=newer,
        target=older,
        relation=Relation.SUPERSEDES,
        actor=actor,
        door=door,
        confirm_constitutional=confirm_constitutional,
    )
    _record_decision(conflict_decision(decision, kept=newer), actor=actor, door=door)
    return decision


@transaction.atomic
def conflict_resolve(
    *, first: Memory, second: Memory, note: str, actor=None, door: str = "system"
) -> ConflictDecision:
    """Both stay (perhaps after an edit): the conflict is settled, with a note saying why."""
    _conflict_pair(first, second, actor)
    if not note or not note.strip():
        raise ValidationFailed({"note": "Say in a few words how the conflict was resolved."})
    if len(note) > 2000:
        raise ValidationFailed({"note": "At most 2,000 characters."})
    decision = _decide(first, second, ConflictStatus.RESOLVED, note, actor)
    _record_decision(conflict_decision(decision), actor=actor, door=door)
    return decision


def contradicting_edge(first: Memory, second: Memory) -> CausalEdge | None:
    return CausalEdge.objects.filter(
        relation=Relation.CONTRADICTS,
        source_id__in=[first.pk, second.pk],
        target_id__in=[first.pk, second.pk],
    ).first()


# --- decisions in the memories' history ---------------------------------------------------------
#
# A decision on a pair is recorded as a "decision" revision on both memories, carrying what
# is needed to take it back: {"queue", "outcome", "ref" (pair or decision row id), "memories",
# "kept", "archived" (whether the decision archived the other one), "note"}. Undoing records
# the same dict as the `before` of a new decision revision on both.


def pair_decision(
    pair: DuplicatePair, outcome: str, *, kept: Memory | None = None, archived: bool = False
) -> dict:
    return _decision("duplicates", outcome, pair.pk, pair.first, pair.second, kept, archived, "")


def conflict_decision(
    decision: ConflictDecision, *, kept: Memory | None = None, archived: bool = False
) -> dict:
    return _decision(
        "conflicts",
        decision.status,
        decision.pk,
        decision.first,
        decision.second,
        kept,
        archived,
        decision.note,
    )


def _decision(queue, outcome, ref, first, second, kept, archived, note) -> dict:
    return {
        "queue": queue,
        "outcome": str(outcome),
        "ref": ref,
        "memories": [str(first.pk), str(second.pk)],
        "namespace": first.namespace_id,
        "kept": str(kept.pk) if kept is not None else None,
        "archived": archived,
        "note": note,
    }


def _record_decision(decision: dict, *, actor, door: str, undo: bool = False) -> None:
    before, after = ({"decision": decision}, None) if undo else (None, {"decision": decision})
    changes = [
        Change(m, decision["namespace"], Revision.DECISION, before, after)
        for m in decision["memories"]
    ]
    record(changes, actor=actor, door=door)


def decision_undoable(revision: MemoryRevision) -> bool:
    """Is this a queue decision still in effect (not undone, not decided otherwise since)?"""
    decision = (
        (revision.after or {}).get("decision") if revision.action == Revision.DECISION else None
    )
    if not decision:
        return False
    # The pair or conflict is looked up in the revision's own namespace, as is all it touches.
    here = {"namespace_id": revision.namespace_id}
    if decision["queue"] == "duplicates":
        in_effect = DuplicatePair.objects.filter(
            pk=decision["ref"], status=decision["outcome"], **here
        ).exists()
    elif decision["queue"] == recheck.QUEUE:
        in_effect = recheck.confirm_in_effect(revision)
    elif decision["queue"] == review.QUEUE:
        in_effect = review.approval_in_effect(revision)
    else:
        in_effect = ConflictDecision.objects.filter(pk=decision["ref"], **here).exists()
    if not in_effect:
        return False
    later = MemoryRevision.objects.filter(
        namespace_id=revision.namespace_id,
        memory_id=revision.memory_id,
        action=Revision.DECISION,
        created_at__gte=revision.created_at,
    ).exclude(pk=revision.pk)
    return not any(
        (r.before or {}).get("decision", {}).get("ref") == decision["ref"]
        and (r.before or {}).get("decision", {}).get("queue") == decision["queue"]
        for r in later.only("before")
    )


@transaction.atomic
def decision_undo(*, revision: MemoryRevision, actor=None, door: str = "system") -> dict:
    """Take a queue decision back: a superseding link it made goes, a memory it archived comes
    back, and the pair or conflict opens again in its queue. Every step is a revision."""
    if not decision_undoable(revision):
        raise ValidationFailed({"revision": "This decision was already undone or changed since."})
    decision = revision.after["decision"]
    _may_change(revision.namespace_id, actor)
    if decision["queue"] == review.QUEUE:
        review.approval_undo(revision, actor=actor, door=door)
        return decision
    here = {"namespace_id": revision.namespace_id}
    kept = decision.get("kept")
    others = [m for m in decision["memories"] if m != kept] if kept else []
    if kept:
        for edge in CausalEdge.objects.filter(
            source_id=kept, target_id__in=others, relation=Relation.SUPERSEDES, **here
        ):
            edge_delete(edge=edge, actor=actor, door=door)
    if decision.get("archived") and others:
        memories_archive(
            memories=Memory.objects.filter(pk__in=others, archived=True, **here),
            archived=False,
            actor=actor,
            door=door,
        )
    if decision["queue"] == "duplicates":
        DuplicatePair.objects.filter(pk=decision["ref"], **here).update(status=PairStatus.OPEN)
    elif decision["queue"] == recheck.QUEUE:
        recheck.confirm_undo(revision)
    else:
        ConflictDecision.objects.filter(pk=decision["ref"], **here).delete()
    _record_decision(decision, actor=actor, door=door, undo=True)
    return decision
