"""What one validated item of a write becomes before anything is stored: its rows (a long
document is cut into linked chunks), and the key that says which stored record it repeats."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings

from ..chunking import chunk_markdown
from ..duplicate_hash import content_hash
from ..models import CausalEdge, Memory, Namespace, Relation
from ..validation import MemoryInput


@dataclass
class Planned:
    """One memory row about to be inserted, and the item it came from."""

    item: int
    row: Memory
    tags: list[str]

    @property
    def first_chunk(self) -> bool:
        return bool(self.row.metadata.get("chunk_index", 0) == 0)


def record_key(inp: MemoryInput, digest: str) -> tuple[object, ...]:
    """What makes a record itself: its text, and the id and time its writer gave, if any. A
    text said again at another time or under another id is another memory (a conversation turn
    repeated on another day)."""
    return (digest, inp.id, inp.external_id, inp.created_at)


def stored_record(inp: MemoryInput, same_text: Sequence[Memory]) -> Memory | None:
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


def plan_rows(
    idx: int,
    inp: MemoryInput,
    digest: str,
    namespace: Namespace,
    inferred: list[str],
    now: datetime,
    chunk: bool,
) -> list[Planned]:
    tags = inp.tags + inferred
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
        return [Planned(idx, row, tags)]
    document_id = str(inp.id or uuid.uuid4())
    rows = []
    for part in chunks:
        title = " — ".join(filter(None, [inp.title, part.title]))[:300]
        metadata = {
            **inp.metadata,
            "document_id": document_id,
            "chunk_index": part.index,
            "chunk_count": len(chunks),
        }
        row = Memory(
            id=uuid.UUID(document_id) if part.index == 0 else uuid.uuid4(),
            external_id=inp.external_id if part.index == 0 else None,
            title=title,
            content=part.text,
            # The first chunk carries the document's hash, so resubmitting it is a duplicate.
            content_hash=digest if part.index == 0 else content_hash(part.text),
            metadata=metadata,
            **common,
        )
        rows.append(Planned(idx, row, tags))
    return rows


def chunk_edges(planned: list[Planned]) -> list[CausalEdge]:
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
