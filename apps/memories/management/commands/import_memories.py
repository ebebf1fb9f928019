from __future__ import annotations

import time

from django.core.management.base import BaseCommand, CommandError

from apps.core.exceptions import ValidationFailed
from apps.memories.transfer import import_records, read_jsonl


class Command(BaseCommand):
    help = "Import memories from a JSONL file in the neutral format (SPEC section 7)."

    def add_arguments(self, parser):
        parser.add_argument("file", help="Path to a .jsonl file")
        parser.add_argument("--no-progress", action="store_true", help="Hide the progress bar")

    def handle(self, *args, file, no_progress, **options):
        started = time.perf_counter()
        try:
            records = read_jsonl(file)
            stats = import_records(records, progress=not no_progress)
        except FileNotFoundError as exc:
            raise CommandError(f"No such file: {file}") from exc
        except ValidationFailed as exc:
            raise CommandError(f"Nothing imported. {exc.summary()}") from exc
        elapsed = time.perf_counter() - started
        rate = stats.created / elapsed if elapsed else 0.0
        self.stdout.write(
            self.style.SUCCESS(
                f"Imported {stats.created} memories ({stats.skipped} already present, "
                f"{stats.edges} edges) into {len(stats.namespaces)} namespace(s) "
                f"in {elapsed:.1f}s: {rate:.1f} memories/s"
            )
        )
