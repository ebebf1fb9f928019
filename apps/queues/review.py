"""The review queue: memories the namespace's review policy holds until an editor decides.

Approving makes a memory take effect (recorded with the reviewer, undone from its history) and
runs the checks its write skipped; rejecting deletes it to the trash. Editors and owners
review in the UI; over REST only tokens an owner marked trusted do. Nobody reviews with the
credential that wrote the memory.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import QuerySet

from apps.access.models import ApiToken, OAuthConnection
from apps.access.permissions import Action, can
from apps.core.exceptions import PermissionDenied, ValidationFailed
from apps.history.models import MemoryRevision
from apps.history.recording import actor_fields
from apps.memories.models import Memory, Namespace, Review
from apps.memories.revisions import Action as Revision
from apps.memories.services import memory_delete, memory_update
from apps.memories.services.review import memory_after_approval, memory_review_set

QUEUE = "review"


def pending_memories(namespace: Namespace) -> QuerySet[Memory]:
    """The namespace's memories waiting for review, oldest first."""
    return (
        Memory.every_state.filter(namespace=namespace, review=Review.PENDING)
        .prefetch_related("tags")
        .order_by("created_at", "id")
    )


def pending_count(namespace: Namespace) -> int:
    return Memory.every_state.filter(namespace=namespace, review=Review.PENDING).count()


def pending_memory(namespace: Namespace, memory_id) -> Memory | None:
    return (
        Memory.every_state.filter(namespace=namespace, review=Review.PENDING, pk=memory_id)
        .select_related("namespace")
        .first()
    )


def writers(ids: list) -> dict:
    """{memory id: its creation revision}: who wrote each, through which door, and when."""
    created = MemoryRevision.objects.filter(memory_id__in=ids, action=Revision.CREATE)
    return {r.memory_id: r for r in created.order_by("created_at")}


def pending_memory_for(principal, memory_id) -> Memory | None:
    """A pending memory in a namespace `principal` can see."""
    return (
        Memory.every_state.restrict(principal, Action.VIEW)
        .filter(review=Review.PENDING, pk=memory_id)
        .select_related("namespace")
        .first()
    )


def may_review(actor, namespace_id: int) -> None:
    """PermissionDenied unless `actor` is a person who may change the namespace, or a token an
    owner marked trusted that may."""
    if isinstance(actor, OAuthConnection):
        raise PermissionDenied("Connected apps cannot approve or reject memories.")
    if isinstance(actor, ApiToken) and not actor.trusted:
        raise PermissionDenied(
            "Only tokens an owner marked trusted may approve or reject memories; "
            "ask an editor to review it in the Review queue."
        )
    if actor is not None and not can(actor, namespace_id, Action.CHANGE):
        raise PermissionDenied("Only the namespace's editors and owners may review memories.")


def _not_the_writer(actor, memory: Memory) -> None:
    """The credential that wrote a memory never reviews it (a person importing a file may)."""
    if not isinstance(actor, ApiToken | OAuthConnection):
        return
    created = MemoryRevision.objects.filter(memory_id=memory.pk, action=Revision.CREATE)
    who = actor_fields(actor, "rest")
    if isinstance(actor, ApiToken):
        wrote = created.filter(actor_token=actor).exists()
    else:
        wrote = created.filter(actor_label=who["actor_label"]).exists()
    if wrote:
        raise PermissionDenied(
            "This credential wrote the memory; another editor or trusted token must review it."
        )


def _pending(memory: Memory) -> None:
    if memory.review != Review.PENDING:
        raise ValidationFailed({"review": f"This memory is {memory.review}, not pending."})


def _decision(memory: Memory, outcome: str) -> dict:
    return {
        "queue": QUEUE,
        "outcome": outcome,
        "ref": str(memory.pk),
        "memories": [str(memory.pk)],
        "namespace": memory.namespace_id,
        "kept": None,
        "archived": False,
        "note": "",
    }


@transaction.atomic
def memory_approve(
    *, memory: Memory, actor, door: str, content: str | None = None, **changes
) -> dict:
    """Approve a pending memory (after the edits given, if any); returns the checks its write
    skipped: {"near_duplicates", "possible_updates"}."""
    may_review(actor, memory.namespace_id)
    _not_the_writer(actor, memory)
    _pending(memory)
    if content is not None:
        changes["content"] = content
    if changes:
        memory = memory_update(memory=memory, actor=actor, door=door, **changes)
    memory = memory_review_set(
        memory=memory,
        review=Review.APPROVED,
        actor=actor,
        door=door,
        decision=_decision(memory, "approved"),
        reviewed_by=actor_fields(actor, door)["actor_label"],
    )
    return memory_after_approval(memory=memory)


@transaction.atomic
def memory_reject(*, memory: Memory, actor, door: str) -> None:
    """Reject a pending memory: it goes to the trash (restoring it from there approves it)."""
    may_review(actor, memory.namespace_id)
    _not_the_writer(actor, memory)
    _pending(memory)
    memory_delete(memory=memory, actor=actor, door=door)


@transaction.atomic
def memories_approve(*, namespace: Namespace, ids: list, actor, door: str) -> int:
    """Bulk approve: each a decision of its own (undone one by one)."""
    count = 0
    for memory in pending_memories(namespace).filter(pk__in=ids):
        memory_approve(memory=memory, actor=actor, door=door)
        count += 1
    return count


def approval_in_effect(revision: MemoryRevision) -> bool:
    return Memory.every_state.filter(
        pk=revision.memory_id, namespace_id=revision.namespace_id, review=Review.APPROVED
    ).exists()


def approval_undo(revision: MemoryRevision, *, actor, door: str) -> None:
    """Back to the review queue: pending again, found by nothing."""
    memory = Memory.every_state.get(pk=revision.memory_id, namespace_id=revision.namespace_id)
    memory_review_set(
        memory=memory,
        review=Review.PENDING,
        actor=actor,
        door=door,
        decision=revision.after["decision"],
    )
