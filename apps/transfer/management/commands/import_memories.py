from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection, transaction

from apps.core.exceptions import ValidationFailed
from apps.memories import dialog, unindexed
from apps.memories.models import Namespace
from apps.memories.provenance import Origin
from apps.memories.services import namespace_get_or_create
from apps.transfer import importers
from apps.transfer.import_runs import problem_line
from apps.transfer.parallel_import import default_workers, import_parallel
from apps.transfer.transfer import import_records, read_records

# Below this many records one process and one transaction do: starting workers costs more.
PARALLEL_MIN = 2_000


class Command(BaseCommand):
    help = (
        "Import memories: neutral JSONL (SPEC section 7), a zip of markdown notes, an "
        "mcp-memory-service SQLite database or a mem0 JSON export."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="Path to the file to import")
        parser.add_argument(
            "--format",
            default="auto",
            choices=["auto", *importers.FORMATS],
            help="Format of the file (default: recognised from its first bytes and name)",
        )
        parser.add_argument(
            "--namespace",
            help="Put every memory into this namespace (required for formats without one)",
        )
        parser.add_argument("--no-progress", action="store_true", help="Hide the progress bar")
        parser.add_argument(
            "--workers",
            type=int,
            help="Processes that write the file side by side, each batch committed on its own "
            "(a stopped run keeps them; running it again writes the rest). Default: the cores, "
            f"at most 4, for a file of {PARALLEL_MIN} records or more; a smaller one is written "
            "by this process in one transaction.",
        )

    def handle(
        self,
        *args: Any,
        file: str,
        format: str,
        namespace: str | None,
        no_progress: bool,
        workers: int | None,
        **options: Any,
    ) -> None:
        path = Path(file)
        if not path.is_file():
            raise CommandError(f"No such file: {file}")
        if workers is not None and workers < 1:
            raise CommandError("--workers must be 1 or more.")
        fmt = importers.detect(path, path.name) if format == "auto" else format
        if fmt != "jsonl" and not namespace:
            raise CommandError(f"--namespace is required for the {fmt} format.")
        origin = Origin(import_file=path.name, import_format=fmt)
        started = time.perf_counter()
        labelled = []
        try:
            labelled = read_records(path, fmt, namespace=namespace)
            if workers is None:
                workers = default_workers() if len(labelled) >= PARALLEL_MIN else 1
            # Workers see only committed rows: inside a caller's transaction one process writes.
            if workers > 1 and not connection.in_atomic_block:
                stats = import_parallel(
                    labelled,
                    workers=workers,
                    namespace=namespace,
                    progress=not no_progress,
                    origin=origin,
                )
            else:
                with transaction.atomic():  # a rejected file leaves no new namespace either
                    target = namespace_get_or_create(name=namespace) if namespace else None
                    stats = import_records(
                        labelled, progress=not no_progress, namespace=target, origin=origin
                    )
        except ValidationFailed as exc:
            labels = {label for label, _ in labelled}
            problems = "\n".join(problem_line(k, v, labels) for k, v in exc.errors.items())
            raise CommandError(f"Nothing imported.\n{problems}") from exc
        elapsed = time.perf_counter() - started
        rate = stats.created / elapsed if elapsed else 0.0
        where = ", ".join(sorted(stats.namespaces))
        self.stdout.write(
            self.style.SUCCESS(
                f"Imported into {where}: {stats.summary()} in {elapsed:.1f}s "
                f"({rate:.1f} memories/s)"
            )
        )
        targets = Namespace.objects.filter(name__in=stats.namespaces)
        if outside := unindexed.waiting(targets.values_list("pk", flat=True)):
            self.stdout.write(
                f"{outside} memories are searchable now; their vectors enter the HNSW index in "
                "the background: the worker or the running server adds them within a minute, "
                "`manage.py run_job vector_index` now."
            )
        if waiting := dialog.queued(targets.values_list("pk", flat=True)):
            self.stdout.write(
                f"{waiting} dialog turns are searchable now; their previous-turn passages "
                "(each turn read after the one before it) follow in the background: the worker "
                "or the running server writes them within a minute, "
                "`manage.py run_job dialog_passages` now."
            )
