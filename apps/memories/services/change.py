"""Changing, archiving, deleting, re-embedding and merging memories."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.core.exceptions import ValidationFailed

from .. import embeddings, revisions
from ..fields import UPDATABLE
from ..jobs import graph_changed
from ..models import CausalEdge, Memory, Relation
from ..texts import content_hash, embedding_text
from ..validation import validate_memory_input
from .create import unique_content_guard
from .tags import tag_ids

# --- update, archive, delete ----------------------------------------------------------------


@transaction.atomic
def memory_update(
    *,
    memory: Memory,
    actor: revisions.Actor = None,
    door: str = "system",
    action: str | None = None,
    **changes: Any,
) -> Memory:
    """Change fields of one memory; content changes re-embed it and recompute its hash.

    Records one revision with the fields that really changed (none when nothing did), named
    `action` when given (a revision restore passes "restore"), else after what changed.
    """
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
    state_before = revisions.memory_state(memory)
    for name in changes.keys() - {"tags"}:
        setattr(memory, name, getattr(checked, name))
    if archived is not None:
        memory.archived = archived
    tags = checked.tags if "tags" in changes else state_before["tags"]
    before, after = revisions.diff_states(state_before, revisions.memory_state(memory, tags))
    if not after:
        return memory
    if "content" in after:
        # The hash is of the content alone (a document's first chunk holds the whole
        # document's); a title change keeps it, so it can never meet another row's hash.
        memory.content_hash = content_hash(memory.content)
    if "content" in after or "title" in after:
        memory.embedding = embeddings.embed_texts([embedding_text(memory.title, memory.content)])[0]
        memory.embedding_model = embeddings.model_name()
    memory.updated_at = timezone.now()
    with unique_content_guard():
        memory.save()
    if "tags" in after:
        ids = tag_ids(checked.tags)
        memory.tags.set([ids[t] for t in checked.tags])
    action = action or revisions.update_action(after)
    revisions.record_one(memory, action, before, after, actor=actor, door=door)
    return memory


@transaction.atomic
def memory_archive(
    *, memory: Memory, archived: bool = True, actor: revisions.Actor = None, door: str = "system"
) -> Memory:
    memories_archive(
        memories=Memory.objects.filter(pk=memory.pk), archived=archived, actor=actor, door=door
    )
    memory.archived = archived
    return memory


@transaction.atomic
def memories_archive(
    *, memories, archived: bool = True, actor: revisions.Actor = None, door: str = "system"
) -> int:
    """Archive (or restore) many memories at once; only rows whose flag flips get a revision."""
    flipping = memories.filter(archived=not archived)
    rows = list(flipping.values_list("id", "namespace_id"))
    if not rows:
        return 0
    with unique_content_guard():  # restoring a memory whose text is stored again meanwhile
        Memory.objects.filter(pk__in=[pk for pk, _ in rows]).update(
            archived=archived, updated_at=timezone.now()
        )
    action = revisions.Action.ARCHIVE if archived else revisions.Action.UNARCHIVE
    revisions.record(
        [
            revisions.Change(pk, ns, action, {"archived": not archived}, {"archived": archived})
            for pk, ns in rows
        ],
        actor=actor,
        door=door,
    )
    return len(rows)


@transaction.atomic
def memory_delete(*, memory: Memory, actor: revisions.Actor = None, door: str = "system") -> None:
    """Delete a memory; its last version, tags and edges wait in the namespace's trash."""
    edge_count = revisions.trash_put(memory, actor=actor, door=door)
    namespace_id = memory.namespace_id
    memory.delete()
    if edge_count:
        transaction.on_commit(lambda: graph_changed(namespace_id))


# --- bulk maintenance (admin actions) ---------------------------------------------------------


@transaction.atomic
def memories_reembed(*, memories, actor: revisions.Actor = None, door: str = "system") -> int:
    """Recompute embeddings of the given memories with the current model, in batches.

    Takes actor and door like every write, but records no revision: no tracked field changes.
    """
    revisions.record([], actor=actor, door=door)  # checks the door
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
def memories_merge(
    *, keep: Memory, others: Iterable[Memory], actor: revisions.Actor = None, door: str = "system"
) -> Memory:
    """Fold near-duplicates into `keep`: it gains their tags and supersedes them (archived)."""
    others = [m for m in others if m.pk != keep.pk]
    if any(m.namespace_id != keep.namespace_id for m in others):
        raise ValidationFailed({"memories": "Only memories of one namespace can be merged."})
    tags_before = sorted(keep.tags.values_list("name", flat=True))
    tag_ids = set(keep.tags.values_list("id", flat=True))
    merge = revisions.Action.MERGE
    changes = []
    for other in others:
        tag_ids |= set(other.tags.values_list("id", flat=True))
        edge, _ = CausalEdge.objects.update_or_create(
            source=keep,
            target=other,
            relation=Relation.SUPERSEDES,
            defaults={"strength": 1.0, "namespace_id": keep.namespace_id},
        )
        before, after = {}, {"edge": revisions.edge_dict(edge)}
        if not other.archived:
            before["archived"], after["archived"] = False, True
        changes.append(revisions.Change(other.pk, other.namespace_id, merge, before, after))
    keep.tags.set(tag_ids)
    tags_after = sorted(keep.tags.values_list("name", flat=True))
    kept_after = {"merged": [str(m.pk) for m in others]}
    kept_before = None
    if tags_after != tags_before:
        kept_before, kept_after["tags"] = {"tags": tags_before}, tags_after
    changes.append(revisions.Change(keep.pk, keep.namespace_id, merge, kept_before, kept_after))
    Memory.objects.filter(pk__in=[m.pk for m in others]).update(
        archived=True, updated_at=timezone.now()
    )
    if others:
        revisions.record(changes, actor=actor, door=door)
        transaction.on_commit(lambda: graph_changed(keep.namespace_id))
    return keep
