"""Changing, archiving, deleting, re-embedding and merging memories."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.core.exceptions import ValidationFailed
from apps.jobs import triggers

from .. import embeddings
from ..fields import UPDATABLE
from ..models import CausalEdge, Memory, Relation
from ..validation import validate_memory_input
from .create import _tag_ids, content_hash, embedding_text

# --- update, archive, delete ----------------------------------------------------------------


@transaction.atomic
def memory_update(*, memory: Memory, **changes: Any) -> Memory:
    """Change fields of one memory; content changes re-embed it and recompute its hash."""
    unknown = set(changes) - UPDATABLE - {"archived"}
    if unknown:
        raise ValidationFailed({name: "Unknown or read-only field." for name in sorted(unknown)})
    archived = changes.pop("archived", None)
    if archived is not None and not isinstance(archived, bool):
        raise ValidationFailed({"archived": "Must be true or false."})
    current = {
        "content": memory.content,
        "title": memory.title,
        "category": memory.category,
        "tier": memory.tier,
    }
    checked = validate_memory_input({**current, **changes})
    for name in changes.keys() - {"tags"}:
        setattr(memory, name, getattr(checked, name))
    if "content" in changes or "title" in changes:
        memory.content_hash = content_hash(memory.content)
        memory.embedding = embeddings.embed_texts([embedding_text(memory.title, memory.content)])[0]
        memory.embedding_model = embeddings.model_name()
    if archived is not None:
        memory.archived = archived
    memory.updated_at = timezone.now()
    memory.save()
    if "tags" in changes:
        ids = _tag_ids(checked.tags)
        memory.tags.set([ids[t] for t in checked.tags])
    return memory


def memory_archive(*, memory: Memory, archived: bool = True) -> Memory:
    Memory.objects.filter(pk=memory.pk).update(archived=archived, updated_at=timezone.now())
    memory.archived = archived
    return memory


def memories_archive(*, memories) -> int:
    """Bulk archive (admin action)."""
    return memories.update(archived=True, updated_at=timezone.now())


@transaction.atomic
def memory_delete(*, memory: Memory) -> None:
    had_edges = CausalEdge.objects.touching([memory.pk]).exists()
    namespace_id = memory.namespace_id
    memory.delete()
    if had_edges:
        transaction.on_commit(lambda: triggers.graph_changed(namespace_id))


# --- bulk maintenance (admin actions) ---------------------------------------------------------


@transaction.atomic
def memories_reembed(*, memories) -> int:
    """Recompute embeddings of the given memories with the current model, in batches."""
    rows = list(memories.only("id", "title", "content"))
    model_name = embeddings.model_name()
    for start in range(0, len(rows), settings.EMBEDDING_BATCH_SIZE * 4):
        batch = rows[start : start + settings.EMBEDDING_BATCH_SIZE * 4]
        vectors = embeddings.embed_texts([embedding_text(m.title, m.content) for m in batch])
        for memory, vector in zip(batch, vectors, strict=True):
            memory.embedding, memory.embedding_model = vector, model_name
        Memory.objects.bulk_update(batch, ["embedding", "embedding_model"])
    return len(rows)


@transaction.atomic
def memories_merge(*, keep: Memory, others: Iterable[Memory]) -> Memory:
    """Fold near-duplicates into `keep`: it gains their tags and supersedes them (archived)."""
    others = [m for m in others if m.pk != keep.pk]
    if any(m.namespace_id != keep.namespace_id for m in others):
        raise ValidationFailed({"memories": "Only memories of one namespace can be merged."})
    tag_ids = set(keep.tags.values_list("id", flat=True))
    for other in others:
        tag_ids |= set(other.tags.values_list("id", flat=True))
        CausalEdge.objects.update_or_create(
            source=keep,
            target=other,
            relation=Relation.SUPERSEDES,
            defaults={"strength": 1.0, "namespace_id": keep.namespace_id},
        )
    keep.tags.set(tag_ids)
    Memory.objects.filter(pk__in=[m.pk for m in others]).update(
        archived=True, updated_at=timezone.now()
    )
    if others:
        transaction.on_commit(lambda: triggers.graph_changed(keep.namespace_id))
    return keep
