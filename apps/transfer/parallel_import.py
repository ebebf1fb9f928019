"""A large import on several processes, one progress line for all of them.

One process cannot use a big machine: the encoder's threads stop scaling after a few cores
and the write path between two encoder calls runs on one. So the records, once all checked,
are cut into batches that worker processes write side by side, each batch through the same
write service as any import (transfer.write_batch) in a transaction of its own, with the
encoder threads the machine has shared out among the workers. A record repeated in the file is
written once, so workers never write the same record and take no locks against each other: a
batch holding every hash lock would make the others wait out its whole transaction.

Bounded: `workers` processes, each writing one batch at a time. Resumable: a committed batch
stays when the run stops, and a new run skips what is stored (by id, or by text and time) and
writes the rest. The links go last, in one transaction in this process, once every memory they
join is stored.
"""

from __future__ import annotations

import logging
import multiprocessing
import multiprocessing.util
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from django.conf import settings
from django.db import connections, transaction
from tqdm import tqdm

from apps.core.exceptions import ValidationFailed
from apps.jobs.triggers import drain_requests, hold_requests_in_database
from apps.memories import revisions
from apps.memories.models import Namespace
from apps.memories.provenance import Origin
from apps.memories.services import namespace_get_or_create
from apps.vectors.embeddings import usable_cores

from .importers import Labelled, Record
from .transfer import (
    DEFAULT_ORIGIN,
    ImportStats,
    check_records,
    count_written,
    existing_ids,
    import_edges,
    refresh_memory_statistics,
    split_repeats,
    write_batch,
)

# Records per batch: large enough for one encoder call to be efficient, small enough that a
# stopped run loses little and every worker has batches to take until the end.
BATCH_RECORDS = 256
# A batch for a worker: its namespace's id and its records.
_Job = tuple[int, Labelled]
logger = logging.getLogger(__name__)


def default_workers() -> int:
    return max(1, min(usable_cores(), 4))


def import_parallel(
    labelled: Sequence[tuple[str, Record]],
    *,
    workers: int,
    namespace: str | None = None,
    actor: revisions.Actor = None,
    door: str = "cli",
    progress: bool = True,
    origin: Origin = DEFAULT_ORIGIN,
) -> ImportStats:
    """Import `labelled` records with `workers` processes; every record is checked first and
    a file with a bad record writes nothing. Returns the counts, as import_records does."""
    checked_in = Namespace(name=namespace) if namespace else None
    by_namespace = check_records(list(labelled), namespace=checked_in)
    stats = ImportStats()
    jobs: list[_Job] = []
    targets: dict[str, Namespace] = {}
    for name, numbered in by_namespace.items():
        target = targets[name] = namespace_get_or_create(name=namespace or name)
        stats.namespaces.add(target.name)
        once, repeated = split_repeats(numbered)  # no two workers write the same record
        stats.repeated += repeated
        have = existing_ids(target, [r for _, r in once])
        fresh = [(label, r) for label, r in once if str(r.get("id", "")) not in have]
        stats.skipped += len(once) - len(fresh)
        jobs += [
            (target.pk, fresh[i : i + BATCH_RECORDS]) for i in range(0, len(fresh), BATCH_RECORDS)
        ]
    fresh_ids = _run_jobs(
        jobs, workers, stats, actor=actor, door=door, origin=origin, progress=progress
    )
    with transaction.atomic():
        stats.edges = import_edges(by_namespace, targets, fresh_ids, actor=actor, door=door)
    if stats.created >= settings.IMPORT_ANALYZE_MIN_MEMORIES:
        refresh_memory_statistics()
    return stats


def _run_jobs(
    jobs: list[_Job],
    workers: int,
    stats: ImportStats,
    *,
    actor: revisions.Actor,
    door: str,
    origin: Origin,
    progress: bool,
) -> set[uuid.UUID]:
    passed = stats.skipped + len(stats.repeated)
    total = sum(len(chunk) for _, chunk in jobs) + passed
    bar = tqdm(total=total, initial=passed, unit="mem", disable=not progress, desc="import")
    fresh_ids: set[uuid.UUID] = set()
    # The children are forked: none may share this process's connections, pooled ones
    # included (a shared socket mixes two sessions' messages).
    connections.close_all()
    for conn in connections.all(initialized_only=True):
        if hasattr(conn, "close_pool"):
            conn.close_pool()
    threads = max(1, usable_cores() // workers)
    context = multiprocessing.get_context("fork")
    with _without_broker_cleanup_in_children():
        pool = context.Pool(
            workers, initializer=_start_worker, initargs=(threads, actor, door, origin)
        )
    with pool:
        for created, skipped, errors in pool.imap_unordered(_write_job, jobs):
            if errors:
                pool.terminate()
                exc = ValidationFailed(errors)
                count_written(exc, stats)
                raise exc
            fresh_ids.update(created)
            stats.created += len(created)
            stats.skipped += skipped
            bar.update(len(created) + skipped)
            bar.set_postfix_str(f"{stats.created} new, {stats.skipped} already stored")
    bar.close()
    _queue_held_jobs()
    return fresh_ids


def _queue_held_jobs() -> None:
    """The workers kept their job requests in the database: queue them from here."""
    try:
        drain_requests()
    except Exception as exc:  # the broker is down: beat drains them once it is back
        logger.warning("import: job requests kept until the broker is back: %s", exc)


@contextmanager
def _without_broker_cleanup_in_children() -> Iterator[None]:
    """Fork without kombu's after-fork hook: it closes the broker connections the child
    inherited by talking on them, and on a socket the parent shares the child then waits for
    a reply that never comes (the import hung). The workers never use the broker (their job
    requests wait in the database), so they leave those connections alone."""
    # The ignore: typeshed leaves out this private registry.
    registry = multiprocessing.util._afterfork_registry  # type: ignore[attr-defined]
    held = {key: registry[key] for key in list(registry) if key[2].__module__ == "kombu.resource"}
    for key in held:
        del registry[key]
    try:
        yield
    finally:
        registry.update(held)


_worker: dict[str, Any] = {}


def _start_worker(threads: int, actor: revisions.Actor, door: str, origin: Origin) -> None:
    """A worker's share of the encoder threads, and who the revisions name."""
    settings.EMBEDDING_BATCH_THREADS = threads
    hold_requests_in_database()
    _worker.update(actor=actor, door=door, origin=origin, namespaces={})


def _write_job(job: _Job) -> tuple[list[uuid.UUID], int, dict[str, list[str]]]:
    """One batch in its own transaction: (ids created, records skipped, errors by label)."""
    namespace_id, chunk = job
    spaces = _worker["namespaces"]
    target = spaces.get(namespace_id) or spaces.setdefault(
        namespace_id, Namespace.objects.get(pk=namespace_id)
    )
    try:
        results = write_batch(
            target,
            chunk,
            actor=_worker["actor"],
            door=_worker["door"],
            origin=_worker["origin"],
            lock=False,
        )
    except ValidationFailed as exc:
        return [], 0, exc.errors
    created = [res.memory.pk for res in results if res.created]
    return created, len(results) - len(created), {}
