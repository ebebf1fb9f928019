"""Import and export in the neutral JSONL format of SPEC section 7.

A record: {"id", "namespace", "content", "created_at", "tags", "metadata"} plus, when memoryhub
wrote it, "updated_at", "title", "category", "file_path", "source", "trigger_phrases", "tier",
"importance", "archived" and "edges" ([{"target", "relation", "strength", "created_at"}], the
record's outgoing edges). Export then import restores all of it, ids included: a uuid id becomes
the primary key again, any other id is kept in `external_id`.

An import is one transaction: a bad record anywhere (reported by line) leaves nothing written.
Records whose id already exists in their namespace are skipped, so re-running an import is safe.
"""

from __future__ import annotations

import json
import uuid
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from django.db import transaction
from tqdm import tqdm

from apps.core.dates import parse_instant
from apps.core.exceptions import ValidationFailed

from . import revisions
from .jobs import graph_changed
from .models import CausalEdge, Memory, Namespace
from .services import memories_archive, memory_batch_create, namespace_get_or_create
from .validation import validate_relation

BATCH = 256


@dataclass
class ImportStats:
    created: int = 0
    skipped: int = 0
    edges: int = 0
    namespaces: set[str] = field(default_factory=set)


def read_jsonl(path) -> list[dict]:
    records = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValidationFailed({f"line {number}": f"Not valid JSON: {exc.msg}."}) from exc
            if not isinstance(record, dict):
                raise ValidationFailed({f"line {number}": "Must be a JSON object."})
            records.append(record)
    return records


def _existing_ids(namespace: Namespace, records: list[dict]) -> set[str]:
    uuids, externals = [], []
    for r in records:
        raw = str(r.get("id", ""))
        try:
            uuids.append(uuid.UUID(raw))
        except ValueError:
            externals.append(raw)
    found = Memory.objects.in_namespace(namespace)
    have = {str(i) for i in found.filter(id__in=uuids).values_list("id", flat=True)}
    have |= set(found.filter(external_id__in=externals).values_list("external_id", flat=True))
    return have


def import_records(
    records: Iterable[dict],
    *,
    progress: bool = True,
    actor: revisions.Actor = None,
    door: str = "cli",
) -> ImportStats:
    """Import records; each created memory, archive flag and edge is a revision by `door`."""
    records = list(records)
    fresh_ids: set = set()
    stats = ImportStats()
    by_namespace: dict[str, list[tuple[int, dict]]] = defaultdict(list)
    for number, record in enumerate(records, start=1):
        name = record.get("namespace")
        if not isinstance(name, str) or not name:
            raise ValidationFailed({f"line {number}.namespace": "This field is required."})
        by_namespace[name].append((number, record))

    bar = tqdm(total=len(records), unit="mem", disable=not progress, desc="import")
    with transaction.atomic():
        for name, numbered in by_namespace.items():
            namespace = namespace_get_or_create(name=name)
            stats.namespaces.add(name)
            have = _existing_ids(namespace, [r for _, r in numbered])
            fresh = [(n, r) for n, r in numbered if str(r.get("id", "")) not in have]
            stats.skipped += len(numbered) - len(fresh)
            bar.update(len(numbered) - len(fresh))
            for start in range(0, len(fresh), BATCH):
                chunk = fresh[start : start + BATCH]
                items = [_memory_fields(r) for _, r in chunk]
                try:
                    results = memory_batch_create(
                        namespace=namespace,
                        items=items,
                        check_near_duplicates=False,
                        dedupe=False,
                        chunk=False,
                        infer=False,
                        actor=actor,
                        door=door,
                    )
                except ValidationFailed as exc:
                    raise _by_line(exc, chunk) from exc
                archived = [
                    res.memory.pk
                    for res, (_, r) in zip(results, chunk, strict=True)
                    if r.get("archived")
                ]
                if archived:
                    memories_archive(
                        memories=Memory.objects.filter(pk__in=archived), actor=actor, door=door
                    )
                fresh_ids.update(res.memory.pk for res in results)
                stats.created += len(results)
                bar.update(len(chunk))
        stats.edges = _import_edges(by_namespace, fresh_ids, actor=actor, door=door)
    bar.close()
    return stats


def _memory_fields(record: dict) -> dict:
    return {k: v for k, v in record.items() if k not in {"namespace", "edges", "archived"}}


def _by_line(exc: ValidationFailed, chunk: list[tuple[int, dict]]) -> ValidationFailed:
    """Rename "items[i].field" errors to "line N.field" so people can find the record."""
    errors = {}
    for key, messages in exc.errors.items():
        if key.startswith("items["):
            index, _, rest = key[len("items[") :].partition("]")
            key = f"line {chunk[int(index)][0]}{rest}"
        errors[key] = messages
    return ValidationFailed(errors)


def _import_edges(
    by_namespace: dict[str, list[tuple[int, dict]]], fresh_ids: set, *, actor, door: str
) -> int:
    created = 0
    changes: list[revisions.Change] = []
    for name, numbered in by_namespace.items():
        wanted = [(n, r) for n, r in numbered if r.get("edges")]
        if not wanted:
            continue
        namespace = Namespace.objects.get(name=name)
        lookup = _id_lookup(namespace)
        edges = []
        for number, record in wanted:
            source = lookup.get(str(record.get("id")))
            if not isinstance(record["edges"], list):
                raise ValidationFailed({f"line {number}.edges": "Must be a list."})
            for i, edge in enumerate(record["edges"]):
                field_name = f"line {number}.edges[{i}]"
                target = lookup.get(str(edge.get("target")))
                if source is None or target is None:
                    raise ValidationFailed(
                        {field_name: f"Target {edge.get('target')!r} is not in namespace {name}."}
                    )
                try:
                    relation, strength = validate_relation(
                        edge.get("relation"), edge.get("strength", 1.0)
                    )
                except ValidationFailed as exc:
                    raise ValidationFailed({field_name: str(exc)}) from exc
                created_at = parse_instant(edge.get("created_at"), field=f"{field_name}.created_at")
                if source == target:
                    raise ValidationFailed({field_name: "A memory cannot be linked to itself."})
                edge_row = CausalEdge(
                    namespace=namespace,
                    source_id=source,
                    target_id=target,
                    relation=relation,
                    strength=strength,
                )
                if created_at:
                    edge_row.created_at = created_at
                edges.append(edge_row)
        created += len(CausalEdge.objects.bulk_create(edges, ignore_conflicts=True))
        for edge in edges:  # new rows: an edge with a freshly imported end cannot exist already
            if edge.source_id in fresh_ids or edge.target_id in fresh_ids:
                changes.extend(revisions.edge_changes(edge, revisions.Action.LINK))
        transaction.on_commit(lambda ns=namespace.pk: graph_changed(ns))
    revisions.record(changes, actor=actor, door=door)
    return created


def _id_lookup(namespace: Namespace) -> dict[str, uuid.UUID]:
    lookup = {}
    for pk, external in Memory.objects.in_namespace(namespace).values_list("id", "external_id"):
        lookup[str(pk)] = pk
        if external:
            lookup[external] = pk
    return lookup


def export_records(namespaces: Iterable[str] | None = None) -> Iterator[dict]:
    """Every memory (archived too) of the given namespaces, oldest first, with its edges."""
    memories = Memory.objects.select_related("namespace").prefetch_related("tags")
    if namespaces:
        memories = memories.filter(namespace__name__in=list(namespaces))
    memories = memories.order_by("namespace__name", "created_at", "id")
    public = dict(
        (str(pk), external or str(pk)) for pk, external in memories.values_list("id", "external_id")
    )
    edges: dict[str, list[dict]] = defaultdict(list)
    edge_rows = CausalEdge.objects.filter(source_id__in=memories.values("id")).order_by(
        "created_at"
    )
    for edge in edge_rows:
        edges[str(edge.source_id)].append(
            {
                "target": public[str(edge.target_id)],
                "relation": edge.relation,
                "strength": edge.strength,
                "created_at": edge.created_at.isoformat(),
            }
        )
    for memory in memories.iterator(chunk_size=500):
        record = {
            "id": memory.public_id,
            "namespace": memory.namespace.name,
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
        if edges.get(str(memory.id)):
            record["edges"] = edges[str(memory.id)]
        yield record
