"""Export in the neutral JSONL format of SPEC section 7 (apps/transfer/transfer.py reads it
back), and as a zip of markdown notes: every memory streamed in keyset batches, so memory use
does not grow with the namespace."""

from __future__ import annotations

import json
import re
import uuid
import zipfile
from collections import defaultdict
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

import yaml
from django.db.models import F, QuerySet
from django.db.models.fields.tuple_lookups import Tuple, TupleGreaterThan

from apps.memories import provenance, recheck
from apps.memories.models import CausalEdge, Memory, Namespace

EXPORT_BATCH = 1000


def export_records(
    namespaces: Iterable[str] | None = None,
    *,
    queryset: QuerySet[Memory] | None = None,
    batch: int = EXPORT_BATCH,
) -> Iterator[dict[str, Any]]:
    """Every memory (archived too) of the given namespaces, or of `queryset` (a filtered
    selection), oldest first per namespace, each with its outgoing edges.

    Streamed in keyset batches of `batch` rows ((created_at, id) after the last row seen, over
    the (namespace, created_at) index), so memory use does not grow with the namespace: a
    400,000-memory export holds one batch at a time. Edges are kept when their target is in the
    export too, so the file imports on its own.
    """
    base = queryset if queryset is not None else Memory.objects.all()
    if namespaces:
        base = base.filter(namespace__name__in=list(namespaces))
    ns_ids = base.order_by().values_list("namespace_id", flat=True).distinct()
    names = dict(Namespace.objects.filter(pk__in=ns_ids).order_by("name").values_list("pk", "name"))
    for ns_id, name in names.items():
        selection = base.filter(namespace_id=ns_id)
        after: tuple[datetime, uuid.UUID] | None = None
        while True:
            rows = selection
            if after is not None:
                # created_at >= the last one bounds the (namespace, created_at) index range;
                # the row comparison then drops the rows of that instant already sent.
                rows = rows.filter(created_at__gte=after[0]).filter(
                    TupleGreaterThan(Tuple(F("created_at"), F("id")), after)
                )
            page = list(
                rows.defer("embedding", "search_vector")
                .order_by("created_at", "id")
                .prefetch_related("tags")[:batch]
            )
            if not page:
                break
            edges = _edges_of(page, selection)
            marks = recheck.marks_for_export(page)
            for memory in page:
                record = _record(memory, name, edges.get(memory.pk))
                if memory.pk in marks:
                    record["needs_recheck"] = marks[memory.pk]
                yield record
            after = (page[-1].created_at, page[-1].pk)
            if len(page) < batch:
                break


def _edges_of(
    page: list[Memory], selection: QuerySet[Memory]
) -> dict[uuid.UUID, list[dict[str, Any]]]:
    edges: dict[uuid.UUID, list[dict[str, Any]]] = defaultdict(list)
    rows = (
        CausalEdge.objects.filter(source_id__in=[m.pk for m in page])
        .filter(target_id__in=selection.order_by().values("id"))
        .order_by("created_at", "id")
        .values_list(
            "source_id", "target_id", "target__external_id", "relation", "strength", "created_at"
        )
    )
    for source, target, external, relation, strength, created_at in rows:
        edges[source].append(
            {
                "target": external or str(target),
                "relation": relation,
                "strength": strength,
                "created_at": created_at.isoformat(),
            }
        )
    return edges


def _record(memory: Memory, namespace: str, edges: list[dict[str, Any]] | None) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": memory.public_id,
        "namespace": namespace,
        "content": memory.content,
        "created_at": memory.created_at.isoformat(),
        "updated_at": memory.updated_at.isoformat(),
        "tags": sorted(t.name for t in memory.tags.all()),
        "metadata": memory.metadata,
        "title": memory.title,
        "category": memory.category,
        "file_path": memory.file_path,
        "source": memory.source,
        "trigger_phrases": memory.trigger_phrases,
        "tier": memory.tier,
        "importance": memory.importance,
        "archived": memory.archived,
    }
    for name in ("valid_from", "valid_until"):  # only when set: an open validity is the default
        if getattr(memory, name) is not None:
            record[name] = getattr(memory, name).isoformat()
    origin = provenance.of_memory(memory)
    if origin is not None:  # kept by an import as it was (the import itself added to it)
        record["provenance"] = {k: v for k, v in origin.items() if v is not None}
    if edges:
        record["edges"] = edges
    return record


def export_jsonl(
    records: Iterable[dict[str, Any]], *, flush_at: int = 256 * 1024
) -> Iterator[bytes]:
    """JSONL bytes, one record a line, for a streamed download, in pieces of about `flush_at`
    bytes (each piece is one hop to the ASGI event loop, so not one per record)."""
    parts: list[bytes] = []
    size = 0
    for record in records:
        line = (json.dumps(record, ensure_ascii=False) + "\n").encode()
        parts.append(line)
        size += len(line)
        if size >= flush_at:
            yield b"".join(parts)
            parts, size = [], 0
    if parts:
        yield b"".join(parts)


class _Sink:
    """A write-only, unseekable file for zipfile: what was written since the last drain."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.position = 0

    def write(self, data: bytes) -> int:
        self.parts.append(bytes(data))
        self.position += len(data)
        return len(data)

    def tell(self) -> int:
        return self.position

    def flush(self) -> None:
        pass

    def drain(self) -> bytes:
        out, self.parts = b"".join(self.parts), []
        return out


def export_markdown_zip(
    records: Iterable[dict[str, Any]], *, flush_at: int = 256 * 1024
) -> Iterator[bytes]:
    """A zip of one .md file per memory, every field in YAML front matter (`memoryhub: 1`, so
    the markdown import restores it exactly), streamed in pieces of about `flush_at` bytes."""
    sink = _Sink()
    used: set[str] = set()
    flushed = 0
    # The ignore: typeshed asks the file for close(), which ZipFile never calls on a file given.
    with zipfile.ZipFile(  # type: ignore[call-overload]
        sink, "w", compression=zipfile.ZIP_DEFLATED
    ) as archive:
        for record in records:
            path = _markdown_path(record, used)
            archive.writestr(path, markdown_note(record))
            if sink.position - flushed >= flush_at:
                flushed = sink.position
                yield sink.drain()
    yield sink.drain()


def markdown_note(record: dict[str, Any]) -> str:
    front: dict[str, Any] = {"memoryhub": 1}
    front.update({k: v for k, v in record.items() if k not in {"content", "namespace"}})
    head = yaml.safe_dump(front, allow_unicode=True, sort_keys=False, width=10_000)
    return f"---\n{head}---\n{record['content']}\n"


def _markdown_path(record: dict[str, Any], used: set[str]) -> str:
    label = record.get("title") or record["content"][:60]
    slug = re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")[:60] or "memory"
    key = re.sub(r"[^A-Za-z0-9_.-]+", "-", str(record["id"]))[:40]
    path = f"{record['namespace']}/{record.get('category') or 'note'}/{slug}--{key}.md"
    n = 1
    while path in used:
        n += 1
        path = path.removesuffix(".md") + f"-{n}.md"
    used.add(path)
    return path
