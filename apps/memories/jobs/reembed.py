"""Re-embedding after a model change, and embedding backfill (SPEC section 6).

A memory is stale when it has no vector or its `embedding_model` differs from
settings.EMBEDDING_MODEL. Work goes in batches, each its own transaction, rows claimed with
FOR UPDATE SKIP LOCKED, so a crash loses at most one batch and a re-run picks up where it stopped.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.db import transaction
from django.db.models import Q, QuerySet

from .. import dialog, passages
from ..models import Memory, Namespace

Progress = Callable[[int, int], None]  # (done, total)


def stale_memories(namespace: Namespace | None = None) -> QuerySet[Memory]:
    qs = Memory.objects.filter(
        Q(embedding__isnull=True) | ~Q(embedding_model=settings.EMBEDDING_MODEL)
    )
    return qs.filter(namespace=namespace) if namespace is not None else qs


def reembed_update(
    *,
    namespace: Namespace,
    progress: Progress | None = None,
    batch_size: int | None = None,
    **_options,
) -> dict:
    batch_size = batch_size or settings.JOBS_REEMBED_BATCH_SIZE
    model = settings.EMBEDDING_MODEL
    total = stale_memories(namespace).count()
    done = backfilled = 0
    if progress:
        progress(0, total)
    while True:
        with transaction.atomic():
            batch = list(
                stale_memories(namespace)
                .order_by("id")
                .select_for_update(skip_locked=True)
                .only(*dialog.FIELDS, "embedding")[:batch_size]
            )
            if not batch:
                break
            vectors, passage_rows = passages.embed_memories(batch)
            for memory, vector in zip(batch, vectors, strict=True):
                backfilled += memory.embedding is None
                memory.embedding = vector
                memory.embedding_model = model
            Memory.objects.bulk_update(batch, ["embedding", "embedding_model"])
            passages.save_passages(batch, passage_rows)
            dialog.refresh(batch, following=False)  # stale turns each get their own
        done += len(batch)
        if progress:
            progress(done, max(total, done))
    return {
        "memories_updated": done,
        "backfilled": backfilled,
        "reembedded": done - backfilled,
        "model": model,
    }
