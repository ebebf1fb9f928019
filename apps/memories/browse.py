"""Reads behind the browse list and the memory page: keyset pages, summaries, neighbours.

Keyset pagination: a page is "the next N after this (sort value, id)", so page 500 costs what
page 1 costs (an index range scan), unlike OFFSET which reads and throws away every earlier row.
A chunked document is listed once, by its first chunk; its other chunks open on demand.
"""

from __future__ import annotations

import base64
import json
import uuid
from dataclasses import dataclass
from datetime import datetime

from django.db.models import F, Q, QuerySet
from django.db.models.fields.tuple_lookups import Tuple, TupleGreaterThan, TupleLessThan
from pgvector.django import CosineDistance

from apps.core.readside import as_int, json_object

from .models import CausalEdge, Memory

# sort name -> (model field, descending?)
SORTS: dict[str, tuple[str, bool]] = {
    "newest": ("created_at", True),
    "oldest": ("created_at", False),
    "importance": ("importance", True),
    "pagerank": ("pagerank_score", True),
    "used": ("access_count", True),
}


@dataclass
class Page:
    items: list[Memory]
    next_cursor: str | None
    prev_cursor: str | None


def _encode(value, key, backwards: bool) -> str:
    raw = value.isoformat() if isinstance(value, datetime) else value
    payload = json.dumps({"v": raw, "id": str(key), "b": backwards}).encode()
    return base64.urlsafe_b64encode(payload).decode().rstrip("=")


def _decode(cursor: str, field: str) -> tuple[object, uuid.UUID, bool] | None:
    try:
        payload = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        value = payload["v"]
        if field == "created_at":
            value = datetime.fromisoformat(value)
        return value, uuid.UUID(payload["id"]), bool(payload.get("b"))
    except (ValueError, KeyError, TypeError):
        return None


def listed(queryset: QuerySet[Memory]) -> QuerySet[Memory]:
    """Hide the second and later chunks of a document: it is listed once."""
    return queryset.filter(~Q(metadata__has_key="chunk_index") | Q(metadata__chunk_index=0))


def memory_page(
    queryset: QuerySet[Memory], *, sort: str = "newest", cursor: str | None = None, size: int = 50
) -> Page:
    field, desc = SORTS.get(sort, SORTS["newest"])
    decoded = _decode(cursor, field) if cursor else None
    backwards = bool(decoded and decoded[2])
    # Walking backwards reverses the order, then the page is flipped back.
    walk_desc = desc != backwards
    qs = queryset
    if decoded:
        value, key, _ = decoded
        # A row comparison (field, id) < (value, key): one index range, however deep the page.
        after = TupleLessThan if walk_desc else TupleGreaterThan
        qs = qs.filter(after(Tuple(F(field), F("id")), (value, key)))
    order = [f"-{field}", "-id"] if walk_desc else [field, "id"]
    qs = qs.defer("embedding", "search_vector").order_by(*order).prefetch_related("tags")
    rows = list(qs[: size + 1])
    more = len(rows) > size
    rows = rows[:size]
    if backwards:
        rows.reverse()
    has_next = more if not backwards else True
    has_prev = bool(decoded) and (more if backwards else True)
    next_cursor = prev_cursor = None
    if rows and has_next:
        next_cursor = _encode(getattr(rows[-1], field), rows[-1].pk, False)
    if rows and has_prev:
        prev_cursor = _encode(getattr(rows[0], field), rows[0].pk, True)
    return Page(rows, next_cursor, prev_cursor)


def cursor_after(memory: Memory, sort: str = "newest") -> str:
    """The cursor of the page that starts right after `memory` (benchmarks, deep links)."""
    field, _ = SORTS.get(sort, SORTS["newest"])
    return _encode(getattr(memory, field), memory.pk, False)


def document_chunks(memory: Memory) -> list[Memory]:
    """Every chunk of the document `memory` belongs to, in order ([] when it is not chunked)."""
    document_id = json_object(memory.metadata).get("document_id")
    if not document_id or not isinstance(document_id, str):
        return []
    # The chunks of a document are written together with one created_at: that narrows the
    # lookup to the (namespace, created_at) index instead of reading every row's metadata.
    rows = Memory.objects.filter(
        namespace_id=memory.namespace_id,
        created_at=memory.created_at,
        metadata__contains={"document_id": document_id},
    ).only("id", "title", "content", "metadata", "archived")
    return sorted(rows, key=lambda m: as_int(json_object(m.metadata).get("chunk_index")))


def similar_memories(memory: Memory, limit: int = 5) -> list[tuple[Memory, float]]:
    """The nearest memories by embedding, with cosine similarity (near-duplicates first)."""
    if memory.embedding is None:
        return []
    rows = (
        Memory.objects.filter(namespace_id=memory.namespace_id, embedding__isnull=False)
        .exclude(pk=memory.pk)
        .annotate(distance=CosineDistance("embedding", memory.embedding))
        .only("id", "title", "content", "category", "archived")
        .order_by("distance")[:limit]
    )
    return [(m, round(1.0 - float(m.distance), 4)) for m in rows]


def memory_edges(memory: Memory) -> tuple[list[CausalEdge], list[CausalEdge]]:
    """(outgoing, incoming) edges with the other memory loaded."""
    out = list(
        CausalEdge.objects.filter(source=memory).select_related("target").order_by("relation")
    )
    incoming = list(
        CausalEdge.objects.filter(target=memory).select_related("source").order_by("relation")
    )
    return out, incoming


def summaries(ids: list[str]) -> dict[str, dict]:
    """Fields the search payload leaves out (tier, dates, archived), for a result list."""
    rows = Memory.objects.filter(id__in=ids).values(
        "id", "tier", "created_at", "updated_at", "importance", "archived", "access_count"
    )
    out = {}
    for r in rows:
        # A memory is written with updated_at = created_at; only a later change moves it.
        r["edited"] = r["updated_at"] > r.pop("created_at")
        out[str(r.pop("id"))] = r
    return out
