"""Creating memories: one or a batch, with tags, duplicates, chunks and embeddings."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from django.conf import settings
from django.db import transaction

from apps.core.exceptions import ValidationFailed

from .. import revisions, screening
from ..models import Namespace
from ..provenance import Origin
from ..validation import MemoryInput, validate_memory_input
from .batch import WriteBatch
from .write_result import WriteResult

ON_DUPLICATE = ("report", "skip", "supersede")

__all__ = [
    "ON_DUPLICATE",
    "WriteResult",
    "memory_batch_check",
    "memory_batch_create",
    "memory_batch_embedded",
    "memory_batch_store",
    "memory_create",
]


# --- create ----------------------------------------------------------------------------------


def memory_create(
    *,
    namespace: Namespace,
    content: str,
    on_duplicate: str = "report",
    actor: revisions.Actor = None,
    door: str = "system",
    confirm_constitutional: bool = False,
    origin: Origin | None = None,
    **fields: Any,
) -> WriteResult:
    """Store one memory (chunked when long). Exact duplicates return the existing memory.
    Superseding a constitutional memory needs an owner's `confirm_constitutional`.
    `origin`: what the door knows beyond the actor (the MCP client, an import's file)."""
    items = [{"content": content, **fields}]
    return _create_many(
        namespace,
        items,
        on_duplicate,
        prefix=None,
        actor=actor,
        door=door,
        confirm_constitutional=confirm_constitutional,
        origin=origin,
    )[0]


def memory_batch_create(
    *,
    namespace: Namespace,
    items: Sequence[dict[str, Any]],
    on_duplicate: str = "report",
    check_near_duplicates: bool = True,
    dedupe: bool = True,
    chunk: bool = True,
    infer: bool = True,
    actor: revisions.Actor = None,
    door: str = "system",
    origin: Origin | None = None,
    max_chars: int | None = None,
    vectors: np.ndarray | None = None,
    lock_hashes: bool = True,
    imported: bool = False,
) -> list[WriteResult]:
    """Store many memories in one transaction; embeddings are computed in batches.

    A bad item anywhere fails the whole batch with errors named "items[i].field".
    Imports pass chunk=False and infer=False: they restore records exactly; a record already
    stored comes back with created=False (skipped and counted).
    `vectors` (one row per item, from the configured model) skips the encoder for items that
    are not chunked: `manage.py bench` re-uses the vectors it computed for the same texts.
    `lock_hashes=False` leaves out the locks that make a concurrent writer of the same text
    wait for this one: for worker processes that write disjoint records of one import, which
    the locks would only serialize (the unique constraint still refuses a record stored twice).
    `imported`: the items are records of a file a person imports, which the namespace's review
    policy may hold (screening.hold_reason).
    """
    _check_batch_shape(items, max_chars)
    return _create_many(
        namespace,
        items,
        on_duplicate,
        prefix="items",
        check_near=check_near_duplicates,
        dedupe=dedupe,
        chunk=chunk,
        infer=infer,
        actor=actor,
        door=door,
        origin=origin,
        vectors=vectors,
        lock=lock_hashes,
        imported=imported,
    )


def _check_batch_shape(items: Sequence[dict[str, Any]], max_chars: int | None) -> None:
    if not isinstance(items, list | tuple):
        raise ValidationFailed({"items": "Must be a list of memory objects."})
    if not items:
        raise ValidationFailed({"items": "Must hold at least one memory."})
    if len(items) > settings.MEMORY_BATCH_MAX_ITEMS:
        raise ValidationFailed(
            {"items": f"{len(items)} items; the limit is {settings.MEMORY_BATCH_MAX_ITEMS}."}
        )
    if max_chars is not None:
        _check_batch_cost(items, max_chars)


def _check_batch_cost(items: Sequence[dict[str, Any]], max_chars: int) -> None:
    """Refuse a batch whose texts would hold a worker too long, before any embedding."""
    total = 0
    for item in items:
        if isinstance(item, dict):
            total += sum(len(item[k]) for k in ("content", "title") if isinstance(item.get(k), str))
    if total > max_chars:
        raise ValidationFailed(
            {
                "items": f"{total} characters of content and title in all; the limit per "
                f"request is {max_chars}. Send the memories in smaller batches."
            }
        )


def _validate_all(items: Sequence[dict[str, Any]], prefix: str | None) -> list[MemoryInput]:
    inputs, errors = [], {}
    for i, item in enumerate(items):
        try:
            inputs.append(validate_memory_input(item, prefix=f"{prefix}[{i}]." if prefix else ""))
        except ValidationFailed as exc:
            errors.update(exc.errors)
    if errors:
        raise ValidationFailed(errors)
    return inputs


def _create_many(
    namespace: Namespace,
    items: Sequence[dict[str, Any]],
    on_duplicate: str,
    *,
    prefix: str | None,
    actor: revisions.Actor = None,
    door: str = "system",
    origin: Origin | None = None,
    vectors: np.ndarray | None = None,
    **options: Any,
) -> list[WriteResult]:
    batch = _planned(namespace, items, on_duplicate, prefix=prefix, **options)
    # Embedded before the transaction: the encoder's wait (shared with concurrent writers
    # through the batcher) holds neither the hash lock nor an open transaction.
    batch.embed(vectors)
    return memory_batch_store(batch, actor=actor, door=door, origin=origin)


def _planned(
    namespace: Namespace,
    items: Sequence[dict[str, Any]],
    on_duplicate: str,
    *,
    prefix: str | None,
    check_near: bool = True,
    dedupe: bool = True,
    chunk: bool = True,
    infer: bool = True,
    lock: bool = True,
    imported: bool = False,
    confirm_constitutional: bool = False,
) -> WriteBatch:
    if on_duplicate not in ON_DUPLICATE:
        raise ValidationFailed({"on_duplicate": f"Must be one of: {', '.join(ON_DUPLICATE)}."})
    inputs, redacted = screening.without_secrets(namespace, _validate_all(items, prefix), prefix)
    return WriteBatch(
        namespace,
        inputs,
        prefix=prefix,
        on_duplicate=on_duplicate,
        check_near=check_near,
        dedupe=dedupe,
        chunk=chunk,
        infer=infer,
        lock=lock,
        redacted=redacted,
        imported=imported,
        confirm_constitutional=confirm_constitutional,
    )


def memory_batch_check(
    *,
    namespace: Namespace,
    items: Sequence[dict[str, Any]],
    on_duplicate: str,
    max_chars: int | None,
) -> None:
    """Everything memory_batch_create refuses before it embeds, without embedding: what a
    batch left to the background is checked by in its request."""
    _check_batch_shape(items, max_chars)
    _planned(namespace, items, on_duplicate, prefix="items")


def memory_batch_embedded(
    *,
    namespace: Namespace,
    items: Sequence[dict[str, Any]],
    on_duplicate: str,
    progress: Callable[[int, int], None],
) -> WriteBatch:
    """The first half of memory_batch_create: the batch checked and embedded, in slices that
    report (items done, items in all) to `progress`. memory_batch_store writes it."""
    batch = _planned(namespace, items, on_duplicate, prefix="items")
    batch.embed(None, progress=progress)
    return batch


def memory_batch_store(
    batch: WriteBatch,
    *,
    actor: revisions.Actor = None,
    door: str = "system",
    origin: Origin | None = None,
) -> list[WriteResult]:
    """Write an embedded batch in one transaction (nested in the caller's, if any)."""
    batch.hold(actor=actor)
    with transaction.atomic():
        batch.match_stored()
        batch.probe()
        batch.stamp(actor=actor, door=door, origin=origin)
        batch.store()
        batch.supersede()
        batch.link()
        batch.record(actor=actor, door=door)
    return batch.final_results()
