"""manage.py backfill_passages [--namespace NAME]: the sentence passages of memories written
before passages existed (apps/memories/passages.py), and the previous-turn passages of dialog
turns written before those existed (apps/memories/dialog.py). Run once after upgrading; search
works without them, but those memories are matched on their own text only."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from apps.memories import dialog, passages
from apps.memories.models import Namespace


class Command(BaseCommand):
    help = (
        "Embed and store the sentence passages of memories that have none yet, and the "
        "previous-turn passages of dialog turns."
    )

    def add_arguments(self, parser):
        parser.add_argument("--namespace", help="Only this namespace (default: all).")
        parser.add_argument("--batch-size", type=int, default=200)

    def handle(self, *args, namespace=None, batch_size=200, **options):
        namespace_id = None
        if namespace:
            found = Namespace.objects.filter(name=namespace).first()
            if found is None:
                raise CommandError(f"No namespace named {namespace!r}.")
            namespace_id = found.pk
        if batch_size < 1:
            raise CommandError("--batch-size must be at least 1.")
        added = self._run("passages", "memory", passages.backfill, namespace_id, batch_size)
        self.stdout.write(f"{added} passages stored")
        turns = self._run("dialog turns", "session", dialog.backfill, namespace_id)
        self.stdout.write(f"{turns} previous-turn passages stored")

    def _run(self, desc: str, unit: str, fill, namespace_id, *args) -> int:
        bar = tqdm(unit=unit, desc=desc, file=self.stderr._out)

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.update(done - bar.n)

        try:
            return fill(namespace_id, *args, progress=progress)
        finally:
            bar.close()
