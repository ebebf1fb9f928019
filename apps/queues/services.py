"""Decisions on a near-duplicate pair. Memory changes go through the one write path
(apps.memories.services), so they are revisions the memory's history can undo; the pair's
status records the decision so the job never queues the pair again."""

from __future__ import annotations

from django.db import transaction

from apps.access.permissions import Action, can
from apps.core.exceptions import PermissionDenied, ValidationFailed
from apps.memories.models import Memory
from apps.memories.services import memories_merge

from .models import DuplicatePair, PairStatus


def _check(pair: DuplicatePair, actor) -> None:
    if actor is not None and not can(actor, pair.namespace_id, Action.CHANGE):
        raise PermissionDenied("You may not change memories in this namespace.")
    if pair.status != PairStatus.OPEN:
        raise ValidationFailed({"pair": "This pair has already been decided."})


def _kept_and_other(pair: DuplicatePair, keep_id) -> tuple[Memory, Memory]:
    ids = {str(pair.first_id): pair.first, str(pair.second_id): pair.second}
    if str(keep_id) not in ids:
        raise ValidationFailed({"keep": "Choose one of the pair's two memories."})
    other = next(m for k, m in ids.items() if k != str(keep_id))
    return ids[str(keep_id)], other


def pair_keep_both(*, pair: DuplicatePair, actor=None, door: str = "system") -> DuplicatePair:
    """Both memories stay as they are; the pair leaves the queue for good."""
    _check(pair, actor)
    pair.status = PairStatus.KEPT_BOTH
    pair.save(update_fields=["status"])
    return pair


@transaction.atomic
def pair_merge(*, pair: DuplicatePair, keep_id, actor=None, door: str = "system") -> Memory:
    """Keep one text: it gains the other's tags and supersedes it (archived) via memories_merge."""
    _check(pair, actor)
    keep, other = _kept_and_other(pair, keep_id)
    kept = memories_merge(keep=keep, others=[other], actor=actor, door=door)
    pair.status = PairStatus.MERGED
    pair.save(update_fields=["status"])
    return kept
