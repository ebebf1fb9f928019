"""Passages: the sentences of a memory that says several things, each with a vector of its own.

A memory's vector is the mean of everything it says. A dialog turn such as "Thanks, Alice!
It was tough, but I'm doing ok. Been reading that book you recommended" answers a question
about the book with one sentence of three, and its whole-turn cosine to that question is
diluted by the other two. Search takes a memory's best passage cosine next to its own
(apps/search/pipeline/reads/rows.py, fetch_rows). A memory of one sentence has no passages: its
own vector is that sentence's.

A passage's vector comes from the same model call as the memory's own (late chunking,
apps/vectors/embeddings.py): the mean of its tokens' outputs, read in the whole text. A
leading label ("Alice: ", "Decision: ") and a title belong to every sentence after them, so
their tokens are part of each passage; a bracketed aside ("[shares a photo of a sunset]") is a
passage of its own.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence

import numpy as np
from cachetools import TTLCache
from django.db import transaction
from django.db.models import Exists, OuterRef

from apps.vectors import embeddings

from .copying import copy_rows
from .embedding_input import embedding_text
from .models import Memory, Passage

MAX_PASSAGES = 8  # longer texts: neighbouring sentences share a passage
MIN_CHARS = 4  # shorter fragments ("Ok.", "Hi!") are no passage of their own

_LABEL = re.compile(r"^\s*([^:\n\[\]]{1,40}):\s+")
_SPLIT = re.compile(r"(?<=[.!?])\s+|\s*\[|\]\s*|\n+")


def passage_spans(title: str, content: str) -> list[embeddings.Span]:
    """The passages of a memory as character spans of embedding_text(title, content), each with
    the end of the context they share; [] when the memory is a single sentence."""
    offset = len(embedding_text(title, content)) - len(content)  # a title in front
    label = _LABEL.match(content)
    body_start = label.end() if label else 0
    parts = []
    at = body_start
    for gap in _SPLIT.finditer(content, body_start):
        parts.append((at, gap.start()))
        at = gap.end()
    parts.append((at, len(content)))
    parts = [_stripped(content, a, b) for a, b in parts]
    parts = [(a, b) for a, b in parts if b - a >= MIN_CHARS]
    if len(parts) <= 1:
        return []
    if len(parts) > MAX_PASSAGES:  # merge neighbours into MAX_PASSAGES groups of similar size
        size = -(-len(parts) // MAX_PASSAGES)
        parts = [
            (parts[i][0], parts[min(i + size, len(parts)) - 1][1])
            for i in range(0, len(parts), size)
        ]
    context_end = offset + body_start
    return [(context_end, offset + a, offset + b) for a, b in parts]


def passage_texts(title: str, content: str) -> list[str]:
    """The passages as text: each with the context in front ("Alice: I felt powerful")."""
    text = embedding_text(title, content)
    return [text[:c] + text[a:b] for c, a, b in passage_spans(title, content)]


def _stripped(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


# Encodings a create preview made (apps/memories/preview.py), kept in this process for the
# create of the same texts that follows, so the encoder reads a text once; each is taken once.
# A create in another process, or later than KEPT_SECONDS, encodes again.
KEPT_SECONDS = 600
_kept: TTLCache = TTLCache(maxsize=64, ttl=KEPT_SECONDS)
_kept_lock = threading.Lock()


def embed_memories(
    memories: Sequence[Memory], *, keep: bool = False
) -> tuple[np.ndarray, list[Passage]]:
    """The vectors of `memories` (their current text) and their unsaved passages, from one
    encoder call (none for texts a preview encoded). keep=True keeps these encodings for the
    next call with the same texts."""
    if not _kept and not keep:
        vectors, found = _encode(memories)
        return vectors, _rows(memories, found)
    model = embeddings.EncoderSettings.current().key
    keys = [(*model, m.title, m.content) for m in memories]
    with _kept_lock:
        taken = {i: _kept.pop(key) for i, key in enumerate(keys) if key in _kept}
    missing = [i for i in range(len(memories)) if i not in taken]
    vectors, found = _encode([memories[i] for i in missing])
    taken.update({i: (vectors[n], found[n]) for n, i in enumerate(missing)})
    if keep:
        with _kept_lock:
            _kept.update({key: taken[i] for i, key in enumerate(keys)})
    if len(missing) == len(memories):  # nothing was kept (or nothing asked)
        return vectors, _rows(memories, found)
    in_order = [taken[i] for i in range(len(memories))]
    return np.stack([v for v, _ in in_order]), _rows(memories, [own for _, own in in_order])


def _encode(memories: Sequence[Memory]) -> tuple[np.ndarray, list[embeddings.PassageVectors]]:
    spans = [passage_spans(m.title, m.content) for m in memories]
    return embeddings.embed_with_passages(
        [embedding_text(m.title, m.content) for m in memories], spans
    )


def _rows(memories: Sequence[Memory], found: Sequence[embeddings.PassageVectors]) -> list[Passage]:
    return [
        Passage(memory=m, position=i, embedding=vector)
        for m, own in zip(memories, found, strict=True)
        for i, vector in enumerate(own)
        if vector is not None
    ]


def plan_passages(memories: Sequence[Memory]) -> list[Passage]:
    """Unsaved passages of `memories`, for memories whose own vector is known already (the
    encoder still reads each whole text once: passages are pooled from it)."""
    several = [m for m in memories if passage_spans(m.title, m.content)]
    return embed_memories(several)[1] if several else []


def save_passages(memories: Sequence[Memory], passages: Sequence[Passage]) -> None:
    """Replace the stored passages of `memories` with `passages` (those of other memories
    are left out)."""
    keep = {m.pk for m in memories}
    with transaction.atomic():
        # Sentence passages only: a turn's previous-turn passage is dialog.py's to keep.
        Passage.objects.filter(memory__in=list(keep), previous__isnull=True).delete()
        add_passages(memories, passages)


def add_passages(memories: Sequence[Memory], passages: Sequence[Passage]) -> None:
    """Store the passages of `memories` just created (they have none to replace)."""
    keep = {m.pk for m in memories}
    copy_rows(Passage, [p for p in passages if p.memory.pk in keep])


def store_passages(memories: Sequence[Memory]) -> int:
    """Embed and store the passages of `memories` (saved rows); returns how many."""
    if not memories:
        return 0
    rows = plan_passages(memories)
    save_passages(memories, rows)
    return len(rows)


def backfill(namespace_id: int | None = None, batch_size: int = 200, *, progress=None) -> int:
    """Store the passages of memories that have none (written before passages existed);
    returns how many passages were added. Batches in id order, each its own transaction, so
    a stopped run keeps what it did and a new run goes on (single-sentence memories, which
    have no passages, are read again and skipped). `progress(done, total)` after each batch."""
    sentences = Passage.objects.filter(memory=OuterRef("pk"), previous__isnull=True)
    rows = Memory.every_state.filter(~Exists(sentences))
    if namespace_id is not None:
        rows = rows.filter(namespace_id=namespace_id)
    total = rows.count()
    done = added = 0
    last = None
    while True:
        page = rows.order_by("id").only("id", "title", "content")
        if last is not None:
            page = page.filter(id__gt=last)
        batch = list(page[:batch_size])
        if not batch:
            return added
        last = batch[-1].id
        planned = plan_passages(batch)
        save_passages({p.memory for p in planned}, planned)
        added += len(planned)
        done += len(batch)
        if progress:
            progress(done, max(total, done))
