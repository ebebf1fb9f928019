from __future__ import annotations

import contextlib
import json
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from tqdm import tqdm

from apps.memories.models import Memory
from apps.transfer.exporting import export_records


class Command(BaseCommand):
    help = "Export memories (with tags, metadata and edges) as JSONL in the neutral format."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--output", "-o", help="File to write (default: standard output)")
        parser.add_argument(
            "--namespace", action="append", dest="namespaces", help="Only this namespace (repeat)"
        )

    def handle(
        self, *args: Any, output: str | None, namespaces: list[str] | None, **options: Any
    ) -> None:
        total = Memory.objects.all()
        if namespaces:
            total = total.filter(namespace__name__in=namespaces)
        records = tqdm(
            export_records(namespaces),
            total=total.count(),
            unit="mem",
            desc="export",
            file=sys.stderr,
        )
        with contextlib.ExitStack() as stack:
            handle = (
                stack.enter_context(open(output, "w", encoding="utf-8")) if output else sys.stdout
            )
            for record in records:
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        if output:
            self.stderr.write(self.style.SUCCESS(f"Exported {records.n} memories to {output}"))
