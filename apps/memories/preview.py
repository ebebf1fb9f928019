"""What a create would find before it writes: the stored memory with the same text, and the
near-duplicates of its text (cosine >= MEMORY_NEAR_DUPLICATE_SIMILARITY), which the web UI shows
so the writer can choose (keep both, skip, supersede).

The text is embedded once, as the create embeds it (one row per chunk), and the encodings are
kept for that create (passages.embed_memories(keep=True)), so previewing and then writing runs
the encoder once. Nothing is written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from . import neighbours, passages
from .chunking import chunk_markdown
from .duplicate_hash import content_hash
from .models import Memory, Namespace
from .supersession import resolve_superseded
from .validation import validate_memory_input


@dataclass
class CreatePreview:
    duplicate_of: Memory | None = None
    near_duplicates: dict[str, float] = field(default_factory=dict)  # memory id -> cosine

    @property
    def found(self) -> bool:
        return self.duplicate_of is not None or bool(self.near_duplicates)


def create_preview(*, namespace: Namespace, content: str, **fields: Any) -> CreatePreview:
    """Raises ValidationFailed as the create would, for the fields it checks before encoding."""
    memory = validate_memory_input({"content": content, **fields})
    resolve_superseded(namespace, [memory], None)
    same_text = Memory.objects.in_namespace(namespace).filter(
        content_hash=content_hash(memory.content)
    )
    stored = same_text.order_by("created_at", "id").first()
    if stored is not None:
        return CreatePreview(duplicate_of=stored)
    vectors, _ = passages.embed_memories(_rows(memory.title, memory.content), keep=True)
    found = neighbours.nearest_per_vector(
        namespace.pk,
        vectors,
        limit=5,
        min_similarity=settings.MEMORY_NEAR_DUPLICATE_SIMILARITY,
    )
    near: dict[str, float] = {}
    for _, memory_id, similarity in found:
        near.setdefault(str(memory_id), round(similarity, 4))
    return CreatePreview(near_duplicates=near)


def _rows(title: str, content: str) -> list[Memory]:
    """Unsaved rows with the texts the create embeds: the memory, or each chunk of a long
    document with the document's title before the chunk's."""
    chunks = chunk_markdown(content, settings.MEMORY_CHUNK_MAX_CHARS)
    if len(chunks) == 1:
        return [Memory(title=title, content=content)]
    return [
        Memory(title=" — ".join(filter(None, [title, chunk.title]))[:300], content=chunk.text)
        for chunk in chunks
    ]
