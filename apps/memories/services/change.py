"""Changing, archiving, deleting, re-embedding and merging memories."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q, QuerySet, Value
from django.db.models.functions import Coalesce, Left, NullIf
from django.utils import timezone

from apps.core.exceptions import NotFound, ValidationFailed, VersionConflict
from apps.vectors import embeddings

from .. import constitutional, dialog, passages, recheck, revisions, screening
from ..duplicate_hash import content_hash
from ..fields import UPDATABLE as UPDATABLE
from ..jobs import graph_changed
from ..models import CausalEdge, Memory, Relation, Tier
from ..validation import validate_memory_input
from .edges import edge_create, edge_delete
from .tags import tag_ids
from .unique_guard import unique_content_guard

# --- update, archive, delete ----------------------------------------------------------------


def memory_locked(pk: uuid.UUID | str, *, expected_version: int | None = None) -> Memory:
    """The row of memory `pk` as stored now, locked until the transaction ends: every change,
    delete and restore of one memory takes this lock first, so they run one after another and
    each starts from what the one before stored. Gone (deleted meanwhile): NotFound. A version
    other than `expected_version` (when given): VersionConflict, with the row as it is now."""
    memory: Memory | None = Memory.every_state.select_for_update(of=("self",)).filter(pk=pk).first()
    if memory is None:
        raise NotFound(f"Memory {pk} does not exist (it was deleted).")
    if expected_version is not None and memory.version != expected_version:
        raise VersionConflict(
            f"Memory {pk} changed since version {expected_version}; it is at version "
            f"{memory.version} now. Read it again and apply your change to that.",
            current=memory,
        )
    return memory


@transaction.atomic
def memory_update(
    *,
    memory: Memory,
    actor: revisions.Actor = None,
    door: str = "system",
    action: str | None = None,
    expected_version: int | None = None,
    confirm_constitutional: bool = False,
    **changes: Any,
) -> Memory:
    """Change fields of one memory; content changes re-embed it and recompute its hash.

    The row is read again under a lock (see memory_locked) and only the columns that change are
    written, so two clients changing different fields at once both keep their change. With
    `expected_version`, the change is refused (VersionConflict) when the memory is at another
    version. Records one revision with the fields that really changed (none when nothing did),
    named `action` when given (a revision restore passes "restore"), else after what changed.
    Returns the memory as stored.
    """
    unknown = set(changes) - UPDATABLE - {"archived"}
    if unknown:
        raise ValidationFailed({name: "Unknown or read-only field." for name in sorted(unknown)})
    archived = changes.pop("archived", None)
    if archived is not None and not isinstance(archived, bool):
        raise ValidationFailed({"archived": "Must be true or false."})
    memory = memory_locked(memory.pk, expected_version=expected_version)
    current = {
        "content": memory.content,
        "title": memory.title,
        "category": memory.category,
        "tier": memory.tier,
        # so a new valid_until is checked against the stored valid_from, and the reverse
        "valid_from": memory.valid_from,
        "valid_until": memory.valid_until,
    }
    checked = validate_memory_input({**current, **changes})
    if "content" in changes and screening.has_secrets(checked.content):
        # An edit meets the namespace's secrets policy as a write does; the namespace (one
        # more query) is read only when the text holds a credential.
        checked = screening.without_secrets(memory.namespace, [checked], None)[0][0]
    state_before = revisions.memory_state(memory)
    for name in changes.keys() - {"tags"}:
        setattr(memory, name, getattr(checked, name))
    if archived is not None:
        memory.archived = archived
    tags = checked.tags if "tags" in changes else state_before["tags"]
    before, after = revisions.diff_states(state_before, revisions.memory_state(memory, tags))
    if not after:
        return memory
    # Its content or tier changed, or archived: a constitutional memory needs an owner.
    ruled = state_before["tier"] == Tier.CONSTITUTIONAL and (
        bool({"content", "tier"} & set(after)) or after.get("archived") is True
    )
    if ruled:
        constitutional.require(
            memory, actor=actor, confirmed=confirm_constitutional, what="Changing"
        )
    columns = [name for name in after if name != "tags"] + ["updated_at", "version"]
    if "content" in after:
        # The hash is of the content alone (a document's first chunk holds the whole
        # document's); a title change keeps it, so it can never meet another row's hash.
        hash_before = memory.content_hash
        memory.content_hash = content_hash(memory.content)
        columns.append("content_hash")
        # Back to the text its dependents were marked against (an undo, a restore): those
        # marks go; any other new text marks what rests on this memory.
        recheck.mark_edit(memory, hash_before)
    reembedded = "content" in after or "title" in after
    if reembedded:
        vectors, passage_rows = passages.embed_memories([memory])
        memory.embedding = vectors[0]
        memory.embedding_model = embeddings.model_name()
        columns += ["embedding", "embedding_model"]
    if "content" in after:  # read with the new vector, which the risk check's scorer uses
        memory.risk = screening.findings(memory.content, embedding=memory.embedding)
        columns.append("risk")
    memory.updated_at = timezone.now()
    memory.version += 1
    with unique_content_guard():
        memory.save(update_fields=columns)
    if reembedded:
        passages.save_passages([memory], passage_rows)
        dialog.refresh([memory])
    if "tags" in after:
        ids = tag_ids(checked.tags)
        memory.tags.set([ids[t] for t in checked.tags])
    action = action or revisions.update_action(after)
    after = {**after, **constitutional.RISK} if ruled else after
    revisions.record_one(memory, action, before, after, actor=actor, door=door)
    return memory


@transaction.atomic
def memory_archive(
    *,
    memory: Memory,
    archived: bool = True,
    actor: revisions.Actor = None,
    door: str = "system",
    confirm_constitutional: bool = False,
) -> Memory:
    memory = memory_locked(memory.pk)
    memories_archive(
        memories=Memory.every_state.filter(pk=memory.pk),
        archived=archived,
        actor=actor,
        door=door,
        confirm_constitutional=confirm_constitutional,
    )
    memory.refresh_from_db(fields=["archived", "updated_at", "version"])
    return memory


@transaction.atomic
def memories_archive(
    *,
    memories: QuerySet[Memory],
    archived: bool = True,
    actor: revisions.Actor = None,
    door: str = "system",
    confirm_constitutional: bool = False,
) -> int:
    """Archive (or restore) many memories at once; only rows whose flag flips get a revision.
    Archiving a constitutional memory needs an owner's confirmation (constitutional.py)."""
    flipping = memories.filter(archived=not archived).order_by("pk")
    # Locked (in one order, so two bulk archives cannot deadlock): a concurrent change or
    # archive of the same rows waits, and each flip is recorded once.
    locked = flipping.select_for_update(of=("self",))
    # A rule's name in a refusal: its title, else the start of its content (not all of it).
    named = Coalesce(NullIf("title", Value("")), Left("content", 80))
    rows = list(locked.values_list("id", "namespace_id", "tier", named))
    if not rows:
        return 0
    ruled = set()
    if archived:
        rules = [Memory(pk=pk, namespace_id=ns, tier=tier, title=t) for pk, ns, tier, t in rows]
        if constitutional.guard(
            rules, actor=actor, confirmed=confirm_constitutional, what="Archiving"
        ):
            ruled = {m.pk for m in rules if m.tier == Tier.CONSTITUTIONAL}
    rows = [(pk, ns) for pk, ns, _, _ in rows]
    with unique_content_guard():  # restoring a memory whose text is stored again meanwhile
        Memory.every_state.filter(pk__in=[pk for pk, _ in rows]).update(
            archived=archived, updated_at=timezone.now(), version=F("version") + 1
        )
    action = revisions.Action.ARCHIVE if archived else revisions.Action.UNARCHIVE
    revisions.record(
        [
            revisions.Change(
                pk,
                ns,
                action,
                {"archived": not archived},
                {"archived": archived, **(constitutional.RISK if pk in ruled else {})},
            )
            for pk, ns in rows
        ],
        actor=actor,
        door=door,
    )
    return len(rows)


@transaction.atomic
def memory_delete(
    *,
    memory: Memory,
    actor: revisions.Actor = None,
    door: str = "system",
    expected_version: int | None = None,
    confirm_constitutional: bool = False,
) -> None:
    """Delete a memory; its last version, tags and edges wait in the namespace's trash.

    Under the row's lock (memory_locked): the trash keeps what is stored, including a change
    that landed a moment before, and a change waiting behind the delete finds the memory gone.
    """
    memory = memory_locked(memory.pk, expected_version=expected_version)
    constitutional.guard([memory], actor=actor, confirmed=confirm_constitutional, what="Deleting")
    # Before the row (and its links) go: what rests on it is marked for re-check.
    recheck.mark([recheck.deleted(memory)])
    edge_count = revisions.trash_put(memory, actor=actor, door=door)
    namespace_id = memory.namespace_id
    after = dialog.next_turns([memory])
    memory.delete()
    dialog.refresh(after, following=False)
    if edge_count:
        transaction.on_commit(lambda: graph_changed(namespace_id))


# --- bulk maintenance (admin actions) ---------------------------------------------------------


@transaction.atomic
def memories_reembed(
    *, memories: QuerySet[Memory], actor: revisions.Actor = None, door: str = "system"
) -> int:
    """Recompute embeddings of the given memories with the current model, in batches.

    Takes actor and door like every write, but records no revision: no tracked field changes.
    """
    revisions.record([], actor=actor, door=door)  # checks the door
    rows = list(memories.only(*dialog.FIELDS))
    model_name = embeddings.model_name()
    for start in range(0, len(rows), settings.EMBEDDING_BATCH_SIZE * 4):
        batch = rows[start : start + settings.EMBEDDING_BATCH_SIZE * 4]
        vectors, passage_rows = passages.embed_memories(batch)
        for memory, vector in zip(batch, vectors, strict=True):
            memory.embedding, memory.embedding_model = vector, model_name
        Memory.objects.bulk_update(batch, ["embedding", "embedding_model"])
        passages.save_passages(batch, passage_rows)
        dialog.refresh(batch, following=False)  # each turn's own pair: all are re-embedded
    return len(rows)


@transaction.atomic
def memories_merge(
    *,
    keep: Memory,
    others: Iterable[Memory],
    move_edges: bool = False,
    actor: revisions.Actor = None,
    door: str = "system",
) -> Memory:
    """Fold near-duplicates into `keep`: it gains their tags and supersedes them (archived).

    With `move_edges`, the others' links to third memories move to `keep` (a link `keep`
    already has with the same relation is not doubled). Every moved link is listed in the
    kept memory's merge revision (`edges_moved`: [before, after]), so `memories_unmerge` can
    put it back; the far end's history shows the move too.
    """
    others = [m for m in others if m.pk != keep.pk]
    if any(m.namespace_id != keep.namespace_id for m in others):
        raise ValidationFailed({"memories": "Only memories of one namespace can be merged."})
    tags_before = sorted(keep.tags.values_list("name", flat=True))
    tag_ids = set(keep.tags.values_list("id", flat=True))
    merge = revisions.Action.MERGE
    changes: list[revisions.Change] = []
    # Before the links move: what rested on a merged memory is marked against it.
    recheck.mark(recheck.superseded(other, keep) for other in others)
    moved = _move_edges(keep, others, changes) if move_edges else []
    for other in others:
        tag_ids |= set(other.tags.values_list("id", flat=True))
        edge, _ = CausalEdge.objects.update_or_create(
            source=keep,
            target=other,
            relation=Relation.SUPERSEDES,
            defaults={"strength": 1.0, "namespace_id": keep.namespace_id},
        )
        before: dict[str, Any] = {}
        after: dict[str, Any] = {"edge": revisions.edge_dict(edge)}
        if not other.archived:
            before["archived"], after["archived"] = False, True
        changes.append(revisions.Change(other.pk, other.namespace_id, merge, before, after))
    keep.tags.set(tag_ids)
    tags_after = sorted(keep.tags.values_list("name", flat=True))
    kept_after: dict[str, Any] = {"merged": [str(m.pk) for m in others]}
    if moved:
        kept_after["edges_moved"] = moved
    kept_before: dict[str, Any] | None = None
    if tags_after != tags_before:
        kept_before, kept_after["tags"] = {"tags": tags_before}, tags_after
    changes.append(revisions.Change(keep.pk, keep.namespace_id, merge, kept_before, kept_after))
    Memory.objects.filter(pk__in=[m.pk for m in others]).update(
        archived=True, updated_at=timezone.now(), version=F("version") + 1
    )
    if others:
        revisions.record(changes, actor=actor, door=door)
        transaction.on_commit(lambda: graph_changed(keep.namespace_id))
    return keep


def _move_edges(
    keep: Memory, others: list[Memory], changes: list[revisions.Change]
) -> list[list[dict[str, Any] | None]]:
    """Re-point the others' links to third memories at `keep`; returns [old, new] edge dicts
    (new is None when `keep` already had that link) and adds the far ends' changes."""
    merged = {m.pk for m in others}
    involved = merged | {keep.pk}
    edges = CausalEdge.objects.filter(
        Q(source_id__in=merged) | Q(target_id__in=merged)
    ).select_for_update()
    moved = []
    for edge in list(edges):
        if edge.source_id in involved and edge.target_id in involved:
            continue  # a link inside the merged group goes away with the merged memory
        source = keep.pk if edge.source_id in merged else edge.source_id
        target = keep.pk if edge.target_id in merged else edge.target_id
        far = target if source == keep.pk else source
        old = revisions.edge_dict(edge)
        edge.delete()
        new_edge, created = CausalEdge.objects.get_or_create(
            source_id=source,
            target_id=target,
            relation=edge.relation,
            defaults={"strength": edge.strength, "namespace_id": keep.namespace_id},
        )
        new = revisions.edge_dict(new_edge) if created else None
        moved.append([old, new])
        action = revisions.Action.MERGE
        changes.append(
            revisions.Change(far, keep.namespace_id, action, {"edge": old}, {"edge": new})
        )
    return moved


@transaction.atomic
def memories_unmerge(
    *,
    keep: Memory,
    merge_after: dict[str, Any],
    restore: dict[str, Any],
    actor: revisions.Actor = None,
    door: str = "system",
) -> list[Memory]:
    """Undo a merge: the merged memories come back (unarchived, no longer superseded by
    `keep`), moved links return to them, and `keep` gets `restore` (its tracked fields as they
    were before the merge). `merge_after` is the kept memory's merge revision's `after`.
    Everything is recorded as revisions; returns the memories that came back."""
    merged_ids = [str(x) for x in merge_after.get("merged", [])]
    back = list(Memory.objects.filter(pk__in=merged_ids, namespace_id=keep.namespace_id))
    if not back:
        raise ValidationFailed({"revision": "The merged memories are gone; nothing to undo."})
    superseding = CausalEdge.objects.filter(
        source=keep, target__in=back, relation=Relation.SUPERSEDES
    )
    if not superseding.exists() and not any(m.archived for m in back):
        raise ValidationFailed({"revision": "This merge was already undone."})
    for edge in list(superseding):
        edge_delete(edge=edge, actor=actor, door=door)
    for old, new in merge_after.get("edges_moved", []):
        if new is not None:
            CausalEdge.objects.filter(
                namespace_id=keep.namespace_id,
                source_id=new["source"],
                target_id=new["target"],
                relation=new["relation"],
            ).delete()
            changes = [
                revisions.Change(end, keep.namespace_id, revisions.Action.UNLINK, {"edge": new})
                for end in (new["source"], new["target"])
            ]
            revisions.record(changes, actor=actor, door=door)
        ends = Memory.objects.filter(
            pk__in=[old["source"], old["target"]], namespace_id=keep.namespace_id
        )
        if ends.count() == 2:
            edge_create(
                source=ends.get(pk=old["source"]),
                target=ends.get(pk=old["target"]),
                relation=old["relation"],
                strength=old["strength"],
                actor=actor,
                door=door,
            )
    memories_archive(
        memories=Memory.objects.filter(pk__in=[m.pk for m in back]),
        archived=False,
        actor=actor,
        door=door,
    )
    if restore:
        memory_update(
            memory=keep, actor=actor, door=door, action=revisions.Action.RESTORE, **restore
        )
    return back
