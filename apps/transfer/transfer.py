"""Import and export in the neutral JSONL format of SPEC section 7.

A record: {"id", "namespace", "content", "created_at", "tags", "metadata"} plus, when memoryhub
wrote it, "updated_at", "title", "category", "file_path", "source", "trigger_phrases", "tier",
"importance", "archived", "valid_from", "valid_until" (when set), "edges" ([{"target",
"relation", "strength", "created_at"}], the record's outgoing edges) and "needs_recheck" (its
re-check marks: [{"basis", "basis_title", "reason", "marked_at", "depth", "token"}]) and
"provenance" (apps/memories/provenance.py: kept as the file says, the import added as
"imported"; a record without one is described as written by the import). An imported record
may also name "supersedes", "caused_by" or "depends_on": [ids of memories already stored in
its namespace]. Export then import restores all of it, ids included: a
record's id is kept as the memory's `external_id` (its public id, written back as "id" by an
export) and the memory gets a fresh uuid, unless the id is already a memory of the namespace
(then the record is already stored). Export lives in apps/transfer/exporting.py.

An import is one transaction: a bad record anywhere (reported by line) leaves nothing written.
Records already stored are skipped and counted: one whose id exists in its namespace, or one
with the text of a stored memory and, where the record gives them, its time and id. So a text
repeated at another time (a conversation turn said again on another day) is a memory of its
own, and importing a file again adds nothing. A line that repeats an earlier line of the file
(its id, or its text and time) is skipped too, and the report names it: the person who made
the file learns of the repeat instead of reading it as "already stored".
"""

from __future__ import annotations

import contextlib
import functools
import json
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.db import connection, transaction
from tqdm import tqdm

from apps.core.dates import parse_instant
from apps.core.exceptions import ValidationFailed
from apps.core.wording import counted
from apps.memories import recheck, revisions, screening
from apps.memories.jobs import graph_changed
from apps.memories.models import CausalEdge, Memory, Namespace, SecretsPolicy
from apps.memories.natural_order import natural_key
from apps.memories.provenance import Origin
from apps.memories.services import (
    WriteResult,
    memories_archive,
    memory_batch_create,
    namespace_get_or_create,
)
from apps.memories.validation import validate_memory_input, validate_relation

from . import importers
from .importers import Labelled, Record

BATCH = 256
# An import whose caller names no file: records in the neutral format.
DEFAULT_ORIGIN = Origin(import_format="jsonl")


# How many repeated lines a report names; the count covers them all.
REPEATS_NAMED = 10


@dataclass
class ImportStats:
    created: int = 0
    skipped: int = 0  # already stored before the import
    edges: int = 0
    namespaces: set[str] = field(default_factory=set)
    repeated: list[str] = field(default_factory=list)  # labels of lines repeating an earlier one
    pending: int = 0  # new, but waiting for review (the namespace's review policy)

    def summary(self) -> str:
        """ "2 new, 3 already stored" (and the links and repeated lines, when there were any)."""
        text = f"{self.created} new, {self.skipped} already stored"
        if self.pending:
            text += f", {self.pending} of the new waiting for review"
        if self.edges:
            text += f", {counted(self.edges, 'link')}"
        if self.repeated:
            text += f", {repeats_skipped(len(self.repeated), self.repeated)}"
        return text


def repeats_skipped(count: int, labels: list[str]) -> str:
    """ "1 repeated line skipped (line 5)"; at most REPEATS_NAMED lines are named."""
    named = ", ".join(labels[:REPEATS_NAMED]) + (", …" if count > REPEATS_NAMED else "")
    return f"{counted(count, 'repeated line')} skipped ({named})"


def _repeat_key(record: Record) -> str:
    """What makes a line a repeat of an earlier one: its id, else its text and time (a text
    said again at another time is a memory of its own)."""
    key = record.get("id") or (record.get("content"), record.get("created_at"))
    return json.dumps(key, sort_keys=True, default=str)


def split_repeats(numbered: Labelled) -> tuple[Labelled, list[str]]:
    """The records less those repeating an earlier one, and the repeats' labels. Written once,
    a repeat never reaches the write path (no two parallel workers write the same record)."""
    seen: set[str] = set()
    once: Labelled = []
    repeated: list[str] = []
    for label, record in numbered:
        key = _repeat_key(record)
        if key in seen:
            repeated.append(label)
        else:
            seen.add(key)
            once.append((label, record))
    return once, repeated


def read_jsonl(path: Path) -> list[Record]:
    """The records of a neutral JSONL file; every bad line is reported, by number."""
    return [record for _, record in importers.read_jsonl_labelled(path)]


def read_records(path: Path, fmt: str, *, namespace: Namespace | str | None = None) -> Labelled:
    """The records of a file (importers.read), every bad line in one report: a line that is
    not JSON does not hide the problems of the lines that are, found as the import would."""
    try:
        return importers.read(path, fmt)
    except importers.UnreadableLines as exc:
        errors = dict(exc.errors)
        target = Namespace(name=namespace) if isinstance(namespace, str) else namespace
        try:
            check_records(exc.readable, namespace=target)
        except ValidationFailed as more:
            errors.update(more.errors)
        in_order = sorted(errors.items(), key=lambda item: natural_key(item[0]))
        raise ValidationFailed(dict(in_order[:MAX_REPORTED])) from exc


def existing_ids(namespace: Namespace, records: list[Record]) -> set[str]:
    uuids, externals = [], []
    for r in records:
        raw = str(r.get("id", ""))
        externals.append(raw)  # a uuid too: one used elsewhere is kept as external id
        try:
            uuids.append(uuid.UUID(raw))
        except ValueError:
            continue
    found = Memory.every_state.in_namespace(namespace)
    have = {str(i) for i in found.filter(id__in=uuids).values_list("id", flat=True)}
    have |= set(found.filter(external_id__in=externals).values_list("external_id", flat=True))
    return have


Progress = Callable[[int, int], None]


def import_records(
    records: Iterable[Record] | Iterable[tuple[str, Record]],
    *,
    progress: bool = True,
    actor: revisions.Actor = None,
    door: str = "cli",
    namespace: Namespace | None = None,
    on_progress: Progress | None = None,
    batch_transactions: bool = False,
    should_stop: Callable[[], bool] | None = None,
    origin: Origin | None = None,
) -> ImportStats:
    """Import records; each created memory, archive flag and edge is a revision by `door`.

    `records` are dicts (labelled "line N" by position) or (label, dict) pairs. With `namespace`
    every record goes there, whatever its own "namespace" says (the browser's import into the
    namespace on screen). Every record is checked before anything is written, and all problems
    are reported together; the writes then run in one transaction, or with
    `batch_transactions` in one per IMPORT_TRANSACTION_RECORDS records (a large file holds no
    transaction and no lock for minutes), the links in a last one. `should_stop` is asked
    before each batch: True ends the import with ImportCancelled, the batches written so far
    kept (and skipped, by id, when the file is imported again). `origin` names the file and
    its format for each memory's provenance.
    """
    origin = origin or DEFAULT_ORIGIN
    labelled = [
        item if isinstance(item, tuple) else (f"line {n}", item)
        for n, item in enumerate(records, start=1)
    ]
    by_namespace = check_records(labelled, namespace=namespace)
    fresh_ids: set[uuid.UUID] = set()
    stats = ImportStats()
    total = len(labelled)
    done = 0
    bar = tqdm(total=total, unit="mem", disable=not progress, desc="import")

    def advance(n: int) -> None:
        nonlocal done
        done += n
        bar.update(n)
        if on_progress:
            on_progress(done, total)

    with _counted_on_failure(stats) if batch_transactions else transaction.atomic():
        for name, numbered in by_namespace.items():
            target = namespace or namespace_get_or_create(name=name)
            stats.namespaces.add(target.name)
            once, repeated = split_repeats(numbered)
            stats.repeated += repeated
            have = existing_ids(target, [r for _, r in once])
            fresh = [(n, r) for n, r in once if str(r.get("id", "")) not in have]
            stats.skipped += len(once) - len(fresh)
            advance(len(numbered) - len(fresh))
            size = settings.IMPORT_TRANSACTION_RECORDS if batch_transactions else BATCH
            for start in range(0, len(fresh), size):
                if should_stop is not None and should_stop():
                    raise ImportCancelled(stats)
                chunk = fresh[start : start + size]
                results = write_batch(target, chunk, actor=actor, door=door, origin=origin)
                created = [res for res in results if res.created]
                fresh_ids.update(res.memory.pk for res in created)
                stats.created += len(created)
                stats.pending += sum(1 for res in created if res.pending)
                stats.skipped += len(results) - len(created)
                advance(len(chunk))
        targets = {name: namespace or Namespace.objects.get(name=name) for name in by_namespace}
        with transaction.atomic():
            stats.edges = import_edges(by_namespace, targets, fresh_ids, actor=actor, door=door)
        if stats.created >= settings.IMPORT_ANALYZE_MIN_MEMORIES:
            transaction.on_commit(refresh_memory_statistics)
    bar.close()
    return stats


@contextlib.contextmanager
def _counted_on_failure(stats: ImportStats) -> Iterator[None]:
    """Batches commit one by one: a failure after some of them says how much was written."""
    try:
        yield
    except Exception as exc:
        count_written(exc, stats)
        raise


# The attribute of an exception that counts what an import wrote before it (written_before).
_WRITTEN = "import_stats"


def count_written(exc: Exception, stats: ImportStats) -> None:
    """Mark a failure with what the import had written before it (batches that committed)."""
    setattr(exc, _WRITTEN, stats)


def written_before(exc: Exception) -> ImportStats | None:
    """What an import wrote before `exc` ended it, when count_written marked it."""
    stats: ImportStats | None = getattr(exc, _WRITTEN, None)
    return stats


class ImportCancelled(Exception):
    """An import stopped on request; `stats` counts what was written before it stopped."""

    def __init__(self, stats: ImportStats) -> None:
        self.stats = stats
        super().__init__("import cancelled")


@transaction.atomic
def write_batch(
    target: Namespace,
    chunk: Labelled,
    *,
    actor: revisions.Actor,
    door: str,
    lock: bool = True,
    origin: Origin = DEFAULT_ORIGIN,
) -> list[WriteResult]:
    """One batch of records with their archive flags; a transaction of its own when the import
    has none around it. `lock`: see memory_batch_create's lock_hashes."""
    try:
        results = memory_batch_create(
            namespace=target,
            items=[_memory_fields(r) for _, r in chunk],
            check_near_duplicates=False,
            chunk=False,
            infer=False,
            actor=actor,
            door=door,
            origin=origin,
            lock_hashes=lock,
            imported=True,
        )
    except ValidationFailed as exc:
        raise _by_line(exc, chunk) from exc
    archived = [
        res.memory.pk
        for res, (_, r) in zip(results, chunk, strict=True)
        if r.get("archived") and res.created
    ]
    if archived:
        memories_archive(memories=Memory.objects.filter(pk__in=archived), actor=actor, door=door)
    return results


def refresh_memory_statistics() -> None:
    """ANALYZE the memory table and its tag links, so the planner knows the imported rows.

    Autovacuum analyzes a table only once a tenth of it has changed; until then a namespace
    imported into a large table is planned as if it held one row, and plans that are right for
    one row (a sort of the whole namespace per neighbour probe, a bitmap AND in the keyword
    stage) make its searches 10-20x slower. The full-text index's pending entries are merged
    too (as autovacuum would later): every keyword lookup reads that list until then.
    """
    tables = [Memory._meta.db_table, Memory.tags.through._meta.db_table]
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {', '.join(tables)}")
        cursor.execute("SELECT gin_clean_pending_list('memory_search_vector_gin'::regclass)")


MAX_REPORTED = 200


def check_records(labelled: Labelled, *, namespace: Namespace | None = None) -> dict[str, Labelled]:
    """Check every record (fields, edges, ids) before anything is written; group by namespace.

    Raises ValidationFailed naming "label.field" for every problem found (at most MAX_REPORTED).
    """
    errors: dict[str, list[str]] = {}
    by_namespace: dict[str, Labelled] = defaultdict(list)
    policies: dict[str, str] = {}
    for label, record in labelled:
        if namespace is not None:
            name = namespace.name
        else:
            given = record.get("namespace")
            if not isinstance(given, str) or not given:
                errors[f"{label}.namespace"] = ["This field is required."]
                continue
            name = given
        by_namespace[name].append((label, record))
        try:
            validate_memory_input(_memory_fields(record), prefix=f"{label}.")
        except ValidationFailed as exc:
            errors.update(exc.errors)
        errors.update(_secrets_refused(record, label, policies, namespace or name))
        errors.update(recheck.check_exported(record.get("needs_recheck"), label))
        edges = record.get("edges")
        if edges is not None and not isinstance(edges, list):
            errors[f"{label}.edges"] = ["Must be a list."]
        for i, edge in enumerate(edges if isinstance(edges, list) else []):
            key = f"{label}.edges[{i}]"
            if not isinstance(edge, dict):
                errors[key] = ["Must be an object with target and relation."]
                continue
            try:
                validate_relation(edge.get("relation"), edge.get("strength", 1.0))
            except ValidationFailed as exc:
                errors[key] = [str(exc)]
        if len(errors) >= MAX_REPORTED:
            break
    _give_fresh_ids_to_uuids_not_held_here(by_namespace)
    if errors:
        raise ValidationFailed(dict(list(errors.items())[:MAX_REPORTED]))
    return by_namespace


def _secrets_refused(
    record: Record, label: str, policies: dict[str, str], target: Namespace | str
) -> dict[str, list[str]]:
    """A credential in a record refused by its namespace's policy, named by its line before
    anything is written (the batches of a large file commit one by one)."""
    content = record.get("content")
    refused = screening.refusals(content) if isinstance(content, str) else []
    if not refused:
        return {}
    name = target.name if isinstance(target, Namespace) else target
    if name not in policies:  # a namespace the import creates refuses, as every new one
        stored = (
            target if isinstance(target, Namespace) else Namespace.objects.filter(name=name).first()
        )
        policies[name] = stored.secrets if stored is not None else SecretsPolicy.REFUSE
    if policies[name] != SecretsPolicy.REFUSE:
        return {}
    return {f"{label}.content": refused}


def _give_fresh_ids_to_uuids_not_held_here(by_namespace: dict[str, Labelled]) -> None:
    """A uuid id becomes a primary key only where it already is one: a record whose uuid is
    not a memory of its own namespace gets a new uuid and keeps its id as external id (found
    again by it, links to it still resolve, an export writes it back as the id).

    Whether the uuid is free, held by another namespace, waiting in a trash or only named by
    old revisions, the answer is the same: an import must neither tell whether some memory
    exists where the importer cannot see, nor take over an id whose history, trash entry or
    links belong to another namespace. A record whose uuid is a memory of its own namespace
    is left alone: it is skipped as already stored."""
    for name, numbered in by_namespace.items():
        wanted: defaultdict[uuid.UUID, list[Record]] = defaultdict(list)
        for _, record in numbered:
            try:
                wanted[uuid.UUID(str(record.get("id")))].append(record)
            except ValueError:
                continue
        if not wanted:
            continue
        held_here = set(
            Memory.objects.filter(pk__in=list(wanted), namespace__name=name).values_list(
                "pk", flat=True
            )
        )
        for pk, records in wanted.items():
            for record in records if pk not in held_here else ():
                record["external_id"] = str(record["id"])
                record[NEW_UUID] = True


# Marks a record whose uuid id is kept as external id (see above); never a field of a memory.
NEW_UUID = "\x00new-uuid"


def _memory_fields(record: Record) -> Record:
    fields = {
        k: v
        for k, v in record.items()
        if k not in {"namespace", "edges", "archived", "needs_recheck"}
    }
    if fields.pop(NEW_UUID, False):
        fields.pop("id", None)
    return fields


def _by_line(exc: ValidationFailed, chunk: Labelled) -> ValidationFailed:
    """Rename "items[i].field" errors to "<label>.field" so people can find the record."""
    errors: dict[str, list[str]] = {}
    for key, messages in exc.errors.items():
        if key.startswith("items["):
            index, _, rest = key[len("items[") :].partition("]")
            key = f"{chunk[int(index)][0]}{rest}"
        errors[key] = messages
    return ValidationFailed(errors)


def import_edges(
    by_namespace: dict[str, Labelled],
    targets: dict[str, Namespace],
    fresh_ids: set[uuid.UUID],
    *,
    actor: revisions.Actor,
    door: str,
) -> int:
    created = 0
    changes: list[revisions.Change] = []
    for name, numbered in by_namespace.items():
        wanted = [(n, r) for n, r in numbered if r.get("edges")]
        marked = [r for _, r in numbered if r.get("needs_recheck")]
        if not wanted and not marked:
            continue
        namespace = targets[name]
        lookup = _id_lookup(namespace)
        recheck.marks_import(namespace.pk, marked, lookup)
        edges: list[CausalEdge] = []
        for number, record in wanted:
            source = lookup.get(str(record.get("id")))
            if not isinstance(record["edges"], list):
                raise ValidationFailed({f"{number}.edges": "Must be a list."})
            for i, edge in enumerate(record["edges"]):
                field_name = f"{number}.edges[{i}]"
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
        transaction.on_commit(functools.partial(graph_changed, namespace.pk))
    revisions.record(changes, actor=actor, door=door)
    return created


def _id_lookup(namespace: Namespace) -> dict[str, uuid.UUID]:
    lookup = {}
    for pk, external in Memory.objects.in_namespace(namespace).values_list("id", "external_id"):
        lookup[str(pk)] = pk
        if external:
            lookup[external] = pk
    return lookup
