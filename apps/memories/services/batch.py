"""The steps of one call of the write path, for one memory or a thousand alike.

Each step works on the whole batch at once: the rows are planned and embedded in one encoder
call (their passages pooled from the same call), the stored records they repeat are read in one
query, one nearest-neighbour statement answers both the near-duplicate and the possible-update
check, and the rows, tag links, passages, links and revisions are each written with one
statement (COPY for the rows: apps/memories/copying.py).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from apps.vectors import embeddings
from apps.vectors.encoder_settings import EncoderSettings

from .. import (
    constitutional,
    dialog,
    neighbours,
    passages,
    provenance,
    revisions,
    screening,
    unindexed,
    updates,
)
from ..copying import copy_rows
from ..duplicate_hash import content_hash
from ..jobs import dialog_turns_queued, graph_changed, vectors_left_out
from ..models import CausalEdge, Memory, Namespace, Passage, PossibleUpdate, Review
from ..supersession import close_validity, resolve_superseded
from ..tags import infer_tags
from ..validation import MemoryInput
from ..write_links import link_edges, resolve_links
from .planning import Planned, chunk_edges, plan_rows, record_key, stored_record
from .tags import tag_ids
from .unique_guard import unique_content_guard
from .write_result import WriteResult

# Identical writers queue on one advisory lock per (namespace, bucket of content hashes), so the
# second reads the first's committed row and answers with it; the unique constraint
# memory_ns_content_uniq is the backstop. Buckets bound the locks one batch takes.
HASH_LOCK_BUCKETS = 64
NEAR_DUPLICATES = 5  # reported per item
# Neighbours read per vector: the near-duplicates and the possible-update candidates come from
# the same probe; the margin leaves candidates when some neighbours no longer hold.
PROBE_LIMIT = max(NEAR_DUPLICATES, updates.CANDIDATES) + 5
# Rows encoded per call when a background batch reports its progress.
EMBED_SLICE = 64
# One stored neighbour of a row: (memory id, similarity, valid until).
Neighbour = tuple[uuid.UUID, float, datetime | None]


class WriteBatch:
    """Validated items on their way to rows; call the steps in order (see create.py)."""

    def __init__(
        self,
        namespace: Namespace,
        inputs: Sequence[MemoryInput],
        *,
        prefix: str | None,
        on_duplicate: str,
        check_near: bool,
        dedupe: bool,
        chunk: bool,
        infer: bool,
        lock: bool = True,
        redacted: dict[int, list[str]] | None = None,
        imported: bool = False,
        confirm_constitutional: bool = False,
    ):
        self.namespace, self.inputs, self.on_duplicate = namespace, inputs, on_duplicate
        self.check_near, self.dedupe, self.lock = check_near, dedupe, lock
        self.superseded = resolve_superseded(namespace, inputs, prefix)
        self.links = resolve_links(namespace, inputs, prefix)
        self.now = timezone.now()
        self.hashes = [content_hash(i.content) for i in inputs]
        self.keys = [record_key(i, d) for i, d in zip(inputs, self.hashes, strict=True)]
        self.results: list[WriteResult | None] = [None] * len(inputs)
        self.edges: list[CausalEdge] = []
        self.changes: list[revisions.Change] = []
        self.near: dict[int, list[dict[str, Any]]] = {}
        self.maybe: dict[int, list[dict[str, Any]]] = {}
        # item -> (inferred tags, its rows); an item repeating an earlier one is not planned.
        self.plans: dict[int, tuple[list[str], list[Planned]]] = {}
        self.first_of_key: dict[tuple[object, ...], int] = {}
        for idx, inp in enumerate(inputs):
            if dedupe and self.keys[idx] in self.first_of_key:
                continue
            self.first_of_key.setdefault(self.keys[idx], idx)
            inferred = infer_tags(inp.content, inp.category, inp.tags) if infer else []
            rows = plan_rows(idx, inp, self.hashes[idx], namespace, inferred, self.now, chunk)
            self.plans[idx] = (inferred, rows)
        self.planned: list[Planned] = []
        self.redacted, self.imported = redacted or {}, imported
        self.held: dict[int, str] = {}  # item -> why it waits for review
        self.actor: revisions.Actor = None
        self.confirm_constitutional = confirm_constitutional

    def hold(self, *, actor: revisions.Actor) -> None:
        """Mark the rows of each item the namespace's review policy holds as pending (their
        risk was read by `embed`)."""
        self.actor = actor
        for idx, (_, rows) in self.plans.items():
            found = [f for p in rows for f in p.row.risk]
            why = screening.hold_reason(self.namespace, found, actor=actor, imported=self.imported)
            if why:
                self.held[idx] = why
                for p in rows:
                    p.row.review, p.row.review_reason = Review.PENDING, why

    def embed(
        self, given: np.ndarray | None, *, progress: Callable[[int, int], None] | None = None
    ) -> None:
        """Every planned row's vector and passages, and its risk findings (the risk check's
        scorer reads the vector), before the transaction: the encoder's wait
        then holds neither the hash lock nor an open transaction. With `progress`, the rows
        are encoded EMBED_SLICE at a time and (items done, items) reported after each."""
        every_row = [p for _, rows in self.plans.values() for p in rows]
        if progress is None or given is not None:
            self.vectors, self.passage_rows = _vectors_for(every_row, given)
        else:
            self.vectors, self.passage_rows = _vectors_in_slices(
                every_row, len(self.inputs), progress
            )
        model_name = embeddings.model_name()
        for p, vector in zip(every_row, self.vectors, strict=True):
            p.row.embedding = vector
            p.row.embedding_model = model_name
            # The risk check reads the vector the row is stored with: no second encode.
            p.row.risk = screening.findings(p.row.content, embedding=vector)
        self.position = {id(p): i for i, p in enumerate(every_row)}

    def match_stored(self) -> None:
        """Items already stored get their stored memory; the rest are planned for insert."""
        stored: dict[str, list[Memory]] = {}
        if self.dedupe:
            if self.lock:
                _lock_hashes(self.namespace, self.hashes)
            # Pending memories too: the same text again is that memory, not a second row.
            same_text = Memory.every_state.in_namespace(self.namespace).filter(
                content_hash__in=set(self.hashes)
            )
            for m in same_text.order_by("created_at", "id"):
                stored.setdefault(m.content_hash, []).append(m)
        for idx, digest in enumerate(self.hashes):
            found = stored_record(self.inputs[idx], stored.get(digest, ()))
            if found is not None:
                self.results[idx] = WriteResult(found, False, duplicate_of=found)
            elif idx in self.plans:
                inferred, rows = self.plans[idx]
                self.results[idx] = WriteResult(None, True, inferred_tags=inferred)  # type: ignore[arg-type]
                self.planned.extend(rows)
        self.vectors = self.vectors[[self.position[id(p)] for p in self.planned]]

    def probe(self) -> None:
        """Near-duplicates (stored, or earlier in the batch) and possible updates of every
        planned row, from one nearest-neighbour statement; on_duplicate=skip drops the rows
        whose near-duplicate is stored."""
        if not self.check_near or not self.planned:
            return
        threshold = settings.MEMORY_NEAR_DUPLICATE_SIMILARITY
        found = neighbours.nearest_per_vector(
            self.namespace.pk,
            self.vectors,
            limit=PROBE_LIMIT,
            min_similarity=min(threshold, updates.CANDIDATE_MIN),
            with_validity=True,
        )
        per_row: dict[int, list[Neighbour]] = {}
        for pos, memory_id, similarity, valid_until in sorted(found, key=lambda r: (r[0], -r[2])):
            per_row.setdefault(pos - 1, []).append((memory_id, similarity, valid_until))
        for i, p in enumerate(self.planned):
            close = [(m, s) for m, s, _ in per_row.get(i, []) if s >= threshold]
            for memory_id, similarity in close[:NEAR_DUPLICATES]:
                self.near.setdefault(p.item, []).append(
                    {"id": str(memory_id), "similarity": round(similarity, 4)}
                )
        self._near_in_batch(threshold)
        self._possible_updates(per_row)
        for idx in self.held:  # checked when a person approves it (apps/queues/review.py)
            self.near.pop(idx, None)
            self.maybe.pop(idx, None)
        if self.on_duplicate == "skip":
            self._drop_skipped()

    def _near_in_batch(self, threshold: float) -> None:
        """Compare each row with the earlier rows of other items."""
        sims = self.vectors @ self.vectors.T
        for j in range(1, len(self.planned)):
            for i in np.nonzero(sims[j, :j] >= threshold)[0]:
                if self.planned[i].item != self.planned[j].item:
                    self.near.setdefault(self.planned[j].item, []).append(
                        {
                            "id": str(self.planned[i].row.id),
                            "similarity": round(float(sims[j, i]), 4),
                        }
                    )
                    break

    def _possible_updates(self, per_row: dict[int, list[Neighbour]]) -> None:
        """Stored memories an item reads like an update of (apps/memories/updates.py). Items
        that name what they supersede, and later chunks of a document, are not checked."""
        candidates: dict[int, list[tuple[uuid.UUID, float]]] = {}
        for i, p in enumerate(self.planned):
            if p.item in self.superseded or not p.first_chunk:
                continue
            current = [
                (m, s) for m, s, until in per_row.get(i, []) if until is None or until > self.now
            ]
            candidates[i] = current[: updates.CANDIDATES]
        rows = Memory.objects.in_bulk({m for hits in candidates.values() for m, _ in hits})
        for i, hits in candidates.items():
            p = self.planned[i]
            found = [(rows[m], s) for m, s in hits if m in rows]
            if possible := updates.possible_updates(p.row.content, found):
                self.maybe[p.item] = possible

    def _drop_skipped(self) -> None:
        """on_duplicate=skip: a near-duplicate of a stored memory is not written; the result
        is that memory."""
        batch_ids = {str(q.row.id) for q in self.planned}
        keep: list[Planned] = []
        skipped: dict[int, list[dict[str, Any]]] = {}
        for p in self.planned:
            stored = [d for d in self.near.get(p.item, []) if d["id"] not in batch_ids]
            if stored:
                skipped[p.item] = stored
            else:
                keep.append(p)
        found = Memory.objects.in_bulk([s[0]["id"] for s in skipped.values()])
        for item, stored in skipped.items():
            memory = found[uuid.UUID(stored[0]["id"])]
            self.results[item] = WriteResult(
                memory, False, duplicate_of=memory, near_duplicates=stored
            )
        kept = {id(p) for p in keep}
        self.vectors = self.vectors[[i for i, p in enumerate(self.planned) if id(p) in kept]]
        self.planned = keep

    def stamp(self, *, actor: revisions.Actor, door: str, origin: provenance.Origin | None) -> None:
        """Each planned row's provenance: who wrote it, through which door and credential,
        with which client, from which page or file (the chunks of a document share it)."""
        stamps: dict[int, dict[str, Any]] = {}
        for p in self.planned:
            if p.item not in stamps:
                inp = self.inputs[p.item]
                stamps[p.item] = provenance.columns(
                    actor=actor,
                    door=door,
                    origin=origin,
                    source_url=inp.source_url,
                    given=inp.provenance,
                    now=self.now,
                )
            for name, value in stamps[p.item].items():
                setattr(p.row, name, value)

    def store(self) -> None:
        """The rows, their tag links and passages, and their creation revisions."""
        rows = [p.row for p in self.planned]
        namespace_id = self.namespace.pk
        if unindexed.write_behind(namespace_id, len(rows)):
            # Outside the HNSW index until the vector_index job adds them: the index insert
            # costs more than the encoder in a large database (apps/vectors/vector_index.py).
            for row in rows:
                row.vector_indexed = False
            transaction.on_commit(lambda: vectors_left_out(namespace_id))
        with unique_content_guard():
            # Tag links first (their foreign key to the memory is checked at commit), so the
            # row trigger computes each search vector with its tags on INSERT. The other order
            # wrote every tagged row twice: the tag trigger's UPDATE is not HOT (the vector is
            # GIN-indexed), so each memory also entered the HNSW index twice.
            _attach_tags(self.planned)
            copy_rows(Memory, rows)
        passages.add_passages(rows, self.passage_rows)
        if dialog.refresh_or_queue(rows):  # turns of an imported dialog session only
            transaction.on_commit(lambda: dialog_turns_queued(namespace_id))
        self.changes += revisions.states_for_created([(p.row, p.tags) for p in self.planned])
        self.edges += chunk_edges(self.planned)

    def supersede(self) -> None:
        """What each item supersedes (named, or a near-duplicate with on_duplicate=supersede),
        and the possible updates queued for a person."""
        for idx, result in enumerate(self.results):
            # Storing a text again to confirm what it supersedes: the stored memory does.
            if idx in self.superseded and result is not None and not result.created:
                older = [m for m in self.superseded[idx] if m.pk != result.memory.pk]
                self._close(result.memory, older, result)
        queued = []
        for p in self.planned:
            if not p.first_chunk:
                continue
            result = self._result(p.item)
            if p.item in self.held:
                continue  # a waiting memory ends nothing's validity
            if p.item in self.superseded:
                self._close(p.row, self.superseded[p.item], result)
            for update in self.maybe.get(p.item, []):
                if update["kind"] == PossibleUpdate.Kind.CONTRADICTION:
                    result.possible_contradictions.append(update)
                else:
                    result.possible_updates.append(update)
                queued.append(updates.queued_update(self.namespace, p.row, update))
            stored_near = [d["id"] for d in self.near.get(p.item, []) if d["id"] != str(p.row.pk)]
            if self.on_duplicate == "supersede" and stored_near:
                self._close(p.row, stored_near, None)
        if queued:
            PossibleUpdate.objects.bulk_create(queued, ignore_conflicts=True)

    def link(self) -> None:
        """The `caused_by` and `depends_on` links each item names, from the memory it stored
        (or the stored memory that already holds its text)."""
        for idx, named in self.links.items():
            result = self.results[idx]
            if result is None:
                continue  # repeats an earlier item, which draws the links
            memory = result.memory if result.memory is not None else self._first_row(idx)
            edges, changes = link_edges(memory, named, self.now)
            self.edges += edges
            self.changes += changes
            for name, other in named:
                if other.pk != memory.pk:
                    getattr(result, name).append(str(other.pk))

    def _result(self, item: int) -> WriteResult:
        result = self.results[item]
        assert result is not None, "planned items and the items they repeat have results"
        return result

    def _first_row(self, idx: int) -> Memory:
        return next(p.row for p in self.planned if p.item == idx and p.first_chunk)

    def _close(
        self, newer: Memory, older: Sequence[Memory | str], result: WriteResult | None
    ) -> None:
        rules = [m for m in older if isinstance(m, Memory)]
        if len(rules) < len(older):  # ids of near-duplicates (on_duplicate=supersede)
            rules += Memory.objects.filter(pk__in=[m for m in older if isinstance(m, str)])
        constitutional.guard(
            rules, actor=self.actor, confirmed=self.confirm_constitutional, what="Superseding"
        )
        closed, closing = close_validity(newer=newer, older=older, now=self.now)
        self.edges += closed
        self.changes += closing
        if result is not None:
            result.superseded = [str(m.pk) if isinstance(m, Memory) else m for m in older]

    def record(self, *, actor: revisions.Actor, door: str) -> None:
        if self.edges:
            CausalEdge.objects.bulk_create(self.edges, ignore_conflicts=True)
            namespace_id = self.namespace.pk
            transaction.on_commit(lambda: graph_changed(namespace_id))
        revisions.record(self.changes, actor=actor, door=door)

    def final_results(self) -> list[WriteResult]:
        """One result per item; an item repeating an earlier item shares its memory."""
        for p in self.planned:
            result = self._result(p.item)
            if result.memory is None:
                result.memory = p.row
            result.chunks.append(p.row)
            for dup in self.near.get(p.item, []):
                if dup not in result.near_duplicates:
                    result.near_duplicates.append(dup)
        for idx, held in enumerate(self.results):
            if held is not None and len(held.chunks) == 1:
                held.chunks = []  # only report chunks when a document was split
            if held is not None:
                held.redacted = self.redacted.get(idx, [])
        for idx, held in enumerate(self.results):
            if held is None:
                first = self._result(self.first_of_key[self.keys[idx]])
                self.results[idx] = WriteResult(first.memory, False, duplicate_of=first.memory)
        return self.results  # type: ignore[return-value]


def _vectors_for(
    planned: list[Planned], given: np.ndarray | None
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


def _vectors_in_slices(
    planned: list[Planned], items: int, progress: Callable[[int, int], None]
) -> tuple[np.ndarray, list[Passage]]:
    vectors = [np.zeros((0, EncoderSettings.current().dim))]
    passage_rows: list[Passage] = []
    for start in range(0, len(planned), EMBED_SLICE):
        part = planned[start : start + EMBED_SLICE]
        encoded, own = _vectors_for(part, None)
        vectors.append(encoded)
        passage_rows += own
        done = start + len(part)
        progress(items if done == len(planned) else items * done // len(planned), items)
    return np.concatenate(vectors).astype(np.float32, copy=False), passage_rows


def _lock_hashes(namespace: Namespace, hashes: Sequence[str]) -> None:
    buckets = sorted({int(digest[:8], 16) % HASH_LOCK_BUCKETS for digest in hashes})
    with connection.cursor() as cur:
        cur.execute(
            "SELECT pg_advisory_xact_lock(%s::int, b) FROM unnest(%s::int[]) AS b",
            [namespace.pk, buckets],
        )


def _attach_tags(planned: list[Planned]) -> None:
    ids = tag_ids(t for p in planned for t in p.tags)
    through = Memory.tags.through
    links = [through(memory_id=p.row.id, tag_id=ids[t]) for p in planned for t in p.tags]
    # One INSERT statement; the memories are not written yet, so the tag trigger's refresh
    # finds nothing to do.
    through.objects.bulk_create(links, batch_size=5000, ignore_conflicts=True)
