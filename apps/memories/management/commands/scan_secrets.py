"""manage.py scan_secrets [--namespace NAME]: the credentials in memories already stored.

One line per memory that holds one: its id, its namespace, and each credential's kind and
characters (1-based). The secrets themselves are never printed. Progress (memories scanned,
rate) goes to stderr."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from apps.memories.models import Memory, Namespace
from apps.trust.scan import Progress, describe, scan_rows


class Command(BaseCommand):
    help = "Report the memories whose text holds a credential (kind and place, never the value)."

    def add_arguments(self, parser):
        parser.add_argument("--namespace", help="Only this namespace (default: all).")
        parser.add_argument("--every", type=int, default=5000, help="Progress every N memories.")

    def handle(self, *args, namespace=None, every=5000, **options):
        memories = Memory.every_state.all()  # waiting memories hold text too
        if namespace:
            if not Namespace.objects.filter(name=namespace).exists():
                raise CommandError(f"No namespace named {namespace!r}.")
            memories = memories.filter(namespace__name=namespace)
        if every < 1:
            raise CommandError("--every must be at least 1.")
        total = memories.count()
        rows = (
            ((pk, name), content)
            for pk, name, content in memories.order_by("pk")
            .values_list("pk", "namespace__name", "content")
            .iterator(chunk_size=2000)
        )

        def progress(p: Progress) -> None:
            self.stderr.write(
                f"scanned {p.scanned}/{total} memories ({p.rate:.0f}/s), {p.holding} hold a secret"
            )

        holding = 0
        for (pk, name), secrets in scan_rows(rows, progress=progress, every=every):
            holding += 1
            found = "; ".join(describe(s) for s in secrets)
            self.stdout.write(f"memory {pk} in {name}: {found}")
        self.stdout.write(f"{holding} of {total} memories hold a secret")
