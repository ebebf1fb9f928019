"""A pending memory's review: approved (it takes effect and meets the write path's checks it
skipped), or back to pending (an approval undone). Who may review is the queue's concern
(apps/queues/review.py); rejecting is deleting to the trash (change.memory_delete)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import transaction

from .. import neighbours, revisions, updates
from ..models import Memory, PossibleUpdate, Review
from .batch import NEAR_DUPLICATES, PROBE_LIMIT
from .change import memory_locked


def memory_review_set(
    *,
    memory: Memory,
    review: str,
    actor: revisions.Actor,
    door: str,
    decision: dict[str, Any],
    reviewed_by: str = "",
) -> Memory:
    """Set the review state under the row's lock; the revision carries `decision` so the
    history can name the reviewer and undo it. `reviewed_by` is what recall says of an
    approved memory ("reviewed by ana")."""
    memory = memory_locked(memory.pk)
    before: dict[str, Any] = {"review": memory.review}
    after: dict[str, Any] = {"review": review}
    # A queue decision's revision carries it in `after`; its undo carries it in `before`.
    (before if review == Review.PENDING else after)["decision"] = decision
    memory.review = review
    memory.reviewed_by = reviewed_by if review == Review.APPROVED else ""
    memory.version += 1
    memory.save(update_fields=["review", "reviewed_by", "version"])
    revisions.record_one(memory, revisions.Action.DECISION, before, after, actor=actor, door=door)
    return memory


@transaction.atomic
def memory_after_approval(*, memory: Memory) -> dict[str, Any]:
    """The checks a write skips while it waits: its near-duplicates (reported) and the stored
    memories it reads like an update of (queued for a person, as at write)."""
    threshold = settings.MEMORY_NEAR_DUPLICATE_SIMILARITY
    found = neighbours.nearest_per_vector(
        memory.namespace_id,
        [memory.embedding],
        limit=PROBE_LIMIT,
        min_similarity=min(threshold, updates.CANDIDATE_MIN),
        with_validity=True,
    )
    hits = sorted(
        ((m, s, until) for _, m, s, until in found if m != memory.pk), key=lambda r: -r[1]
    )
    near = [{"id": str(m), "similarity": round(s, 4)} for m, s, _ in hits if s >= threshold][
        :NEAR_DUPLICATES
    ]
    current = [(m, s) for m, s, until in hits if until is None][: updates.CANDIDATES]
    rows = Memory.objects.in_bulk([m for m, _ in current])
    maybe = updates.possible_updates(
        memory.content, [(rows[m], s) for m, s in current if m in rows]
    )
    PossibleUpdate.objects.bulk_create(
        [updates.queued_update(memory.namespace, memory, u) for u in maybe], ignore_conflicts=True
    )
    return {
        "near_duplicates": near,
        "possible_updates": [{k: u[k] for k in ("id", "title", "why")} for u in maybe],
    }
