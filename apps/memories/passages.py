"""Passages: the sentences of a memory that says several things, each embedded on its own.

A memory's vector is the mean of everything it says. A dialog turn such as "Thanks, Caroline!
It was tough, but I'm doing ok. Been reading that book you recommended" answers a question
about the book with one sentence of three, and its whole-turn cosine to that question is
diluted by the other two. Search takes a memory's best passage cosine next to its own
(apps/search/pipeline/retrieve.py, fetch_rows). A memory of one sentence has no passages: its
own vector is that sentence's.

A leading label ("Caroline: ", "Decision: ") belongs to every sentence after it and is kept
in front of each passage; a bracketed aside ("[shares a photo of a sunset]") is a passage of
its own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from django.db import transaction

from . import embeddings
from .models import Memory, Passage

MAX_PASSAGES = 8  # longer texts: neighbouring sentences share a passage
MIN_CHARS = 4  # shorter fragments ("Ok.", "Hi!") are no passage of their own

_LABEL = re.compile(r"^\s*([^:\n\[\]]{1,40}):\s+")
_SPLIT = re.compile(r"(?<=[.!?])\s+|\s*\[|\]\s*|\n+")


def split_passages(title: str, content: str) -> list[str]:
    """The passages of a memory's text; [] when it is a single sentence."""
    text = content.strip()
    match = _LABEL.match(text)
    label = match.group(0).strip() + " " if match else ""
    body = text[match.end() :] if match else text
    parts = [p.strip() for p in _SPLIT.split(body) if p and len(p.strip()) >= MIN_CHARS]
    if len(parts) <= 1:
        return []
    if len(parts) > MAX_PASSAGES:  # merge neighbours into MAX_PASSAGES groups of similar size
        size = -(-len(parts) // MAX_PASSAGES)
        parts = [" ".join(parts[i : i + size]) for i in range(0, len(parts), size)]
    prefix = f"{title}\n" if title and title not in content else ""
    return [f"{prefix}{label}{p}" for p in parts]


def plan_passages(memories: Sequence[Memory]) -> list[Passage]:
    """Unsaved passages of `memories` (their current text), embedded in one encoder batch."""
    planned = [
        (m, i, text) for m in memories for i, text in enumerate(split_passages(m.title, m.content))
    ]
    if not planned:
        return []
    vectors = embeddings.embed_texts([text for _, _, text in planned])
    return [
        Passage(memory=m, position=i, embedding=vector)
        for (m, i, _), vector in zip(planned, vectors, strict=True)
    ]


def save_passages(memories: Sequence[Memory], passages: Sequence[Passage]) -> None:
    """Replace the stored passages of `memories` with `passages` (those of other memories
    are left out)."""
    keep = {m.pk for m in memories}
    with transaction.atomic():
        Passage.objects.filter(memory__in=list(keep)).delete()
        Passage.objects.bulk_create([p for p in passages if p.memory.pk in keep], batch_size=500)


def store_passages(memories: Sequence[Memory]) -> int:
    """Embed and store the passages of `memories` (saved rows); returns how many."""
    if not memories:
        return 0
    rows = plan_passages(memories)
    save_passages(memories, rows)
    return len(rows)


def backfill(namespace_id: int | None = None, *, batch_size: int = 200, progress=None) -> int:
    """Store the passages of memories that have none (written before passages existed);
    returns how many passages were added. Batches in id order, each its own transaction, so
    a stopped run keeps what it did and a new run goes on (single-sentence memories, which
    have no passages, are read again and skipped). `progress(done, total)` after each batch."""
    rows = Memory.objects.filter(passages__isnull=True)
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
