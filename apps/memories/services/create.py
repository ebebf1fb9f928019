"""Creating memories: one or a batch, with tags, duplicates, chunks and embeddings."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from apps.core.exceptions import ValidationFailed

from .. import dialog, embeddings, nearest, passages, revisions, updates
from ..chunking import chunk_markdown
from ..jobs import graph_changed
from ..models import (
    CONTENT_UNIQUE,
    CausalEdge,
    Memory,
    Namespace,
    Passage,
    PossibleUpdate,
    Relation,
)
from ..supersession import close_validity, resolve_superseded
from ..tags import infer_tags
from ..texts import content_hash
from ..validation import MemoryInput, validate_memory_input
from .tags import tag_ids

ON_DUPLICATE = ("report", "skip", "supersede")


@dataclass
class WriteResult:
    memory: Memory
    created: bool
    duplicate_of: Memory | None = None
    near_duplicates: list[dict] = field(default_factory=list)
    chunks: list[Memory] = field(default_factory=list)
    inferred_tags: list[str] = field(default_factory=list)
    # Stored memories this one reads like an update of (id, title, why): not superseded,
    # queued for a person; the writer confirms with `supersedes`.
    possible_updates: list[dict] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)  # ids whose validity this one ended

    def to_dict(self) -> dict:
        return {
            "id": str(self.memory.id),
            "created": self.created,
            "duplicate_of": str(self.duplicate_of.id) if self.duplicate_of else None,
            "near_duplicates": self.near_duplicates,
            "chunks": [str(c.id) for c in self.chunks],
            "inferred_tags": self.inferred_tags,
            "valid_from": self.memory.effective_valid_from.isoformat(),
            "valid_until": _iso(self.memory.valid_until),
            "supersedes": self.superseded,
            "possible_updates": [
                {k: u[k] for k in ("id", "title", "why")} for u in self.possible_updates
            ],
        }


def _iso(moment) -> str | None:
    return moment.isoformat() if moment is not None else None


# --- create ----------------------------------------------------------------------------------


def memory_create(
    *,
    namespace: Namespace,
    content: str,
    on_duplicate: str = "report",
    actor: revisions.Actor = None,
    door: str = "system",
    **fields: Any,
) -> WriteResult:
    """Store one memory (chunked when long). Exact duplicates return the existing memory."""
    items = [{"content": content, **fields}]
    return _create_many(namespace, items, on_duplicate, prefix=None, actor=actor, door=door)[0]


def memory_batch_create(
    *,
    namespace: Namespace,
    items: Sequence[dict],
    on_duplicate: str = "report",
    check_near_duplicates: bool = True,
    dedupe: bool = True,
    chunk: bool = True,
    infer: bool = True,
    actor: revisions.Actor = None,
    door: str = "system",
    max_chars: int | None = None,
    vectors: np.ndarray | None = None,
) -> list[WriteResult]:
    """Store many memories in one transaction; embeddings are computed in batches.

    A bad item anywhere fails the whole batch with errors named "items[i].field".
    Imports pass chunk=False and infer=False: they restore records exactly; a record already
    stored comes back with created=False (skipped and counted).
    `vectors` (one row per item, from the configured model) skips the encoder for items that
    are not chunked: `manage.py bench` re-uses the vectors it computed for the same texts.
    """
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
        vectors=vectors,
    )


def _check_batch_cost(items: Sequence[dict], max_chars: int) -> None:
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


def _validate_all(items: Sequence[dict], prefix: str | None) -> list[MemoryInput]:
    inputs, errors = [], {}
    for i, item in enumerate(items):
        try:
            inputs.append(validate_memory_input(item, prefix=f"{prefix}[{i}]." if prefix else ""))
        except ValidationFailed as exc:
            errors.update(exc.errors)
    if errors:
        raise ValidationFailed(errors)
    return inputs


@dataclass
class _Planned:
    """One memory row about to be inserted, and the item it came from."""

    item: int
    row: Memory
    tags: list[str]


def _create_many(
    namespace: Namespace,
    items: Sequence[dict],
    on_duplicate: str,
    *,
    prefix: str | None,
    check_near: bool = True,
    dedupe: bool = True,
    chunk: bool = True,
    infer: bool = True,
    actor: revisions.Actor = None,
    door: str = "system",
    vectors: np.ndarray | None = None,
) -> list[WriteResult]:
    if on_duplicate not in ON_DUPLICATE:
        raise ValidationFailed({"on_duplicate": f"Must be one of: {', '.join(ON_DUPLICATE)}."})
    inputs = _validate_all(items, prefix)
    superseded = resolve_superseded(namespace, inputs, prefix)
    model_name = embeddings.model_name()
    now = timezone.now()
    hashes = [content_hash(i.content) for i in inputs]

    # Rows are planned and embedded before the transaction: the encoder's wait (tens of
    # milliseconds under load, shared with concurrent writers through the batcher) then holds
    # neither the hash lock nor an open transaction, so concurrent writers do not queue behind
    # each other's encoding. An item that turns out to be stored already is dropped below.
    plans: dict[int, tuple[list[str], list[_Planned]]] = {}
    keys = [_record_key(inp, digest) for inp, digest in zip(inputs, hashes, strict=True)]
    first_of_key: dict[tuple, int] = {}
    for idx, (inp, digest) in enumerate(zip(inputs, hashes, strict=True)):
        if dedupe and keys[idx] in first_of_key:  # the same record twice in one batch
            continue
        first_of_key.setdefault(keys[idx], idx)
        inferred = infer_tags(inp.content, inp.category, inp.tags) if infer else []
        rows = _plan_rows(idx, inp, digest, namespace, inp.tags + inferred, now, chunk=chunk)
        plans[idx] = (inferred, rows)
    every_row = [p for _, rows in plans.values() for p in rows]
    encoded, passage_rows = _vectors_for(every_row, vectors)
    for p, vector in zip(every_row, encoded, strict=True):
        p.row.embedding = vector
        p.row.embedding_model = model_name
    position = {id(p): i for i, p in enumerate(every_row)}

    with transaction.atomic():
        stored: dict[str, list[Memory]] = {}
        if dedupe:
            _lock_hashes(namespace, hashes)
            same_text = Memory.objects.in_namespace(namespace).filter(content_hash__in=set(hashes))
            for m in same_text.order_by("created_at", "id"):
                stored.setdefault(m.content_hash, []).append(m)
        results: list[WriteResult | None] = [None] * len(inputs)
        planned: list[_Planned] = []
        for idx, digest in enumerate(hashes):
            found = _stored_record(inputs[idx], stored.get(digest, ()))
            if found is not None:
                results[idx] = WriteResult(found, False, duplicate_of=found)
                continue
            if idx not in plans:
                continue
            inferred, rows = plans[idx]
            results[idx] = WriteResult(memory=None, created=True, inferred_tags=inferred)  # type: ignore[arg-type]
            planned.extend(rows)
        vectors = encoded[[position[id(p)] for p in planned]]

        near = _near_duplicates(namespace, planned, vectors) if check_near else {}
        maybe = _possible_updates(namespace, planned, vectors, superseded) if check_near else {}
        if on_duplicate == "skip":
            planned = _drop_skipped(planned, near, results)

        with unique_content_guard():
            # Tag links first (their foreign key to the memory is checked at commit), so the
            # row trigger computes each search vector with its tags on INSERT. The other order
            # wrote every tagged row twice: the tag trigger's UPDATE is not HOT (the vector is
            # GIN-indexed), so each memory also entered the HNSW index twice.
            _attach_tags(planned)
            Memory.objects.bulk_create([p.row for p in planned], batch_size=500)
        passages.add_passages([p.row for p in planned], passage_rows)
        dialog.refresh([p.row for p in planned])  # turns of an imported dialog session only
        changes = revisions.states_for_created([(p.row, p.tags) for p in planned])

        edges = _chunk_edges(planned)
        for idx, result in enumerate(results):
            # Storing a text again to confirm what it supersedes: the stored memory does.
            if idx in superseded and result is not None and not result.created:
                kept = result.memory
                older = [m for m in superseded[idx] if m.pk != kept.pk]
                closed, closing = close_validity(newer=kept, older=older, now=now)
                edges += closed
                changes += closing
                results[idx].superseded = [str(m.pk) for m in older]
        queued = []
        for p in planned:
            if p.row.metadata.get("chunk_index", 0) != 0:
                continue
            if p.item in superseded:
                closed, closing = close_validity(newer=p.row, older=superseded[p.item], now=now)
                edges += closed
                changes += closing
                results[p.item].superseded = [str(m.pk) for m in superseded[p.item]]
            for update in maybe.get(p.item, []):
                results[p.item].possible_updates.append(update)
                queued.append(_queued_update(namespace, p.row, update))
        if queued:
            PossibleUpdate.objects.bulk_create(queued, ignore_conflicts=True)
        for p in planned:
            result = results[p.item]
            if result.memory is None:
                result.memory = p.row
            result.chunks.append(p.row)
            for dup in near.get(p.item, []):
                if dup not in result.near_duplicates:
                    result.near_duplicates.append(dup)
            first_chunk = p.row.metadata.get("chunk_index", 0) == 0
            stored_near = [d["id"] for d in near.get(p.item, []) if d["id"] != str(p.row.pk)]
            if on_duplicate == "supersede" and stored_near and first_chunk:
                closed, closing = close_validity(newer=p.row, older=stored_near, now=now)
                edges += closed
                changes += closing
        for result in results:
            if result is not None and len(result.chunks) == 1:
                result.chunks = []  # only report chunks when a document was split
        if edges:
            CausalEdge.objects.bulk_create(edges, ignore_conflicts=True)
            transaction.on_commit(lambda: graph_changed(namespace.pk))
        revisions.record(changes, actor=actor, door=door)

        # Items repeating an earlier item of this batch share its result.
        for idx in range(len(inputs)):
            if results[idx] is None:
                first = results[first_of_key[keys[idx]]]
                results[idx] = WriteResult(first.memory, False, duplicate_of=first.memory)
    return results  # type: ignore[return-value]


def _record_key(inp: MemoryInput, digest: str) -> tuple:
    """What makes a record itself: its text, and the id and time its writer gave, if any. A
    text said again at another time or under another id is another memory (a conversation turn
    repeated on another day)."""
    return (digest, inp.id, inp.external_id, inp.created_at)


def _stored_record(inp: MemoryInput, same_text: Sequence[Memory]) -> Memory | None:
    """The stored memory `inp` repeats: same text and, where the writer gave them, the same id,
    external id and time. A plain write of a stored text returns that memory (SPEC 3)."""
    for memory in same_text:
        if (
            (inp.id is None or memory.pk == inp.id)
            and (inp.external_id is None or memory.external_id == inp.external_id)
            and (inp.created_at is None or memory.created_at == inp.created_at)
        ):
            return memory
    return None


def _vectors_for(
    planned: list[_Planned], given: np.ndarray | None
) -> tuple[np.ndarray, list[Passage]]:
    """The embedding of every planned row: given per item (a row that is an item's only
    chunk takes its item's vector), the rest from the encoder in one batch, which also gives
    their passages. Rows that came with a vector get no passages here (the caller brought
    vectors to spare the encoder); `manage.py backfill_passages` adds them."""
    counts: dict[int, int] = {}
    for p in planned:
        counts[p.item] = counts.get(p.item, 0) + 1
    missing = [i for i, p in enumerate(planned) if given is None or counts[p.item] > 1]
    encoded, passage_rows = passages.embed_memories([planned[i].row for i in missing])
    if given is None:
        return encoded, passage_rows
    out = np.empty((len(planned), given.shape[1]), dtype=np.float32)
    for i, p in enumerate(planned):
        if counts[p.item] == 1:
            out[i] = given[p.item]
    for i, vector in zip(missing, encoded, strict=True):
        out[i] = vector
    return out, passage_rows


# Identical writers queue on one advisory lock per (namespace, bucket of content hashes), so the
# second reads the first's committed row and answers with it; the unique constraint
# memory_ns_content_uniq is the backstop. Buckets bound the locks one batch takes.
HASH_LOCK_BUCKETS = 64


def _lock_hashes(namespace: Namespace, hashes: Sequence[str]) -> None:
    buckets = sorted({int(digest[:8], 16) % HASH_LOCK_BUCKETS for digest in hashes})
    with connection.cursor() as cur:
        cur.execute(
            "SELECT pg_advisory_xact_lock(%s::int, b) FROM unnest(%s::int[]) AS b",
            [namespace.pk, buckets],
        )


@contextmanager
def unique_content_guard():
    """Turn a clash with a stored row (the same record, or an id in use) into a 400."""
    try:
        with transaction.atomic():
            yield
    except IntegrityError as exc:
        if CONTENT_UNIQUE in str(exc):
            raise ValidationFailed(
                {"content": "Identical content, time and id are already stored in this namespace."}
            ) from exc
        raise ValidationFailed({"id": "An id in this request already exists."}) from exc


def _plan_rows(
    idx: int,
    inp: MemoryInput,
    digest: str,
    namespace: Namespace,
    tags: list[str],
    now,
    *,
    chunk: bool = True,
) -> list[_Planned]:
    created_at = inp.created_at or now
    common = dict(
        namespace=namespace,
        category=inp.category,
        file_path=inp.file_path,
        source=inp.source,
        trigger_phrases=inp.trigger_phrases,
        tier=inp.tier,
        importance=inp.importance,
        created_at=created_at,
        updated_at=inp.updated_at or created_at,
        valid_from=inp.valid_from,
        valid_until=inp.valid_until,
    )
    max_chars = settings.MEMORY_CHUNK_MAX_CHARS if chunk else len(inp.content) + 1
    chunks = chunk_markdown(inp.content, max_chars)
    if len(chunks) == 1:
        row = Memory(
            id=inp.id or uuid.uuid4(),
            external_id=inp.external_id,
            title=inp.title,
            content=inp.content,
            content_hash=digest,
            metadata=inp.metadata,
            **common,
        )
        return [_Planned(idx, row, tags)]
    document_id = str(inp.id or uuid.uuid4())
    rows = []
    for chunk in chunks:
        title = " — ".join(filter(None, [inp.title, chunk.title]))[:300]
        metadata = {
            **inp.metadata,
            "document_id": document_id,
            "chunk_index": chunk.index,
            "chunk_count": len(chunks),
        }
        row = Memory(
            id=uuid.UUID(document_id) if chunk.index == 0 else uuid.uuid4(),
            external_id=inp.external_id if chunk.index == 0 else None,
            title=title,
            content=chunk.text,
            # The first chunk carries the document's hash, so resubmitting it is a duplicate.
            content_hash=digest if chunk.index == 0 else content_hash(chunk.text),
            metadata=metadata,
            **common,
        )
        rows.append(_Planned(idx, row, tags))
    return rows


def _near_duplicates(
    namespace: Namespace, planned: list[_Planned], vectors: np.ndarray
) -> dict[int, list[dict]]:
    """Item index -> up to 5 memories with cosine >= threshold (stored, or earlier in the batch)."""
    threshold = settings.MEMORY_NEAR_DUPLICATE_SIMILARITY
    found: dict[int, list[dict]] = {}
    if not planned:
        return found
    stored = nearest.nearest_per_vector(namespace.pk, vectors, limit=5, min_similarity=threshold)
    for pos, memory_id, similarity in stored:
        item = planned[pos - 1].item
        found.setdefault(item, []).append(
            {"id": str(memory_id), "similarity": round(similarity, 4)}
        )
    # Within the batch: compare each row with the earlier rows of other items.
    sims = vectors @ vectors.T
    for j in range(1, len(planned)):
        for i in np.nonzero(sims[j, :j] >= threshold)[0]:
            if planned[i].item != planned[j].item:
                found.setdefault(planned[j].item, []).append(
                    {"id": str(planned[i].row.id), "similarity": round(float(sims[j, i]), 4)}
                )
                break
    return found


def _possible_updates(namespace, planned, vectors, superseded) -> dict[int, list[dict]]:
    """Item index -> stored memories it reads like an update of (apps/memories/updates.py).
    Items that name what they supersede, and later chunks of a document, are not checked."""
    rows = [
        (i, p)
        for i, p in enumerate(planned)
        if p.item not in superseded and p.row.metadata.get("chunk_index", 0) == 0
    ]
    if not rows:
        return {}
    found = updates.candidates(namespace.pk, vectors[[i for i, _ in rows]])
    return {
        p.item: hits
        for (_, p), near in zip(rows, found, strict=True)
        if (hits := updates.possible_updates(p.row.content, near))
    }


def _queued_update(namespace: Namespace, newer: Memory, update: dict) -> PossibleUpdate:
    return PossibleUpdate(
        namespace=namespace,
        newer=newer,
        older_id=update["id"],
        why=update["why"][:500],
        score=update["score"],
    )


def _drop_skipped(planned, near, results) -> list[_Planned]:
    """on_duplicate=skip: a near-duplicate of a stored memory is not written; return that one."""
    keep = []
    for p in planned:
        stored = [
            d for d in near.get(p.item, []) if not any(str(q.row.id) == d["id"] for q in planned)
        ]
        if stored:
            memory = Memory.objects.get(pk=stored[0]["id"])
            results[p.item] = WriteResult(
                memory, False, duplicate_of=memory, near_duplicates=stored
            )
        else:
            keep.append(p)
    return keep


def _attach_tags(planned: list[_Planned]) -> None:
    ids = tag_ids(t for p in planned for t in p.tags)
    through = Memory.tags.through
    links = [through(memory_id=p.row.id, tag_id=ids[t]) for p in planned for t in p.tags]
    # One INSERT statement; the memories are not written yet, so the tag trigger's refresh
    # finds nothing to do.
    through.objects.bulk_create(links, batch_size=5000, ignore_conflicts=True)


def _chunk_edges(planned: list[_Planned]) -> list[CausalEdge]:
    """Consecutive chunks of one document are linked (relates_to), so search can walk them."""
    edges = []
    for prev, nxt in zip(planned, planned[1:], strict=False):
        if prev.item == nxt.item:
            edges.append(
                CausalEdge(
                    namespace_id=prev.row.namespace_id,
                    source=prev.row,
                    target=nxt.row,
                    relation=Relation.RELATES_TO,
                    strength=0.8,
                )
            )
    return edges
