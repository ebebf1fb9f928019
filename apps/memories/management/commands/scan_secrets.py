"""python manage.py scan_secrets [--namespace NAME ...]

Reports the stored memories that hold a credential (stored before the write path refused
them): the memory's id, its namespace, the kind and the place. Never the secret itself.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand

from apps.memories.models import Memory, Namespace
from apps.memories.screening import stored_secrets


class Command(BaseCommand):
    help = "List stored memories that hold a credential (kind and place, never the secret)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--namespace", action="append", default=[], help="Only this namespace (repeatable)."
        )

    def handle(self, *args, namespace: list[str], **options):
        memories = Memory.every_state.order_by("namespace_id", "created_at", "id")
        if namespace:
            memories = memories.filter(namespace__name__in=namespace)
        names = dict(Namespace.objects.values_list("pk", "name"))
        count = 0
        for memory, found in stored_secrets(memories):
            count += 1
            places = ", ".join(f"{s.kind} at characters {s.start + 1}-{s.end}" for s in found)
            self.stdout.write(f"{memory.pk} in {names.get(memory.namespace_id, '?')}: {places}")
        self.stderr.write(
            f"{count} memor{'y holds' if count == 1 else 'ies hold'} a credential. Edit each to "
            "remove it (or delete it): the edit is refused or redacted by the secrets policy."
        )
