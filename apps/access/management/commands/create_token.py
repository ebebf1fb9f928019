"""python manage.py create_token --namespace NAME [--namespace OTHER] [--read-only] [--trusted]
[--name LABEL]

Prints the secret once; only its SHA-256 is stored. Namespaces that do not exist yet are created.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from apps.access.services import token_create
from apps.core.exceptions import ValidationFailed
from apps.memories.services import namespace_get_or_create


class Command(BaseCommand):
    help = "Create an API token scoped to one or more namespaces and print it once."

    def add_arguments(self, parser):
        parser.add_argument(
            "--namespace",
            action="append",
            required=True,
            help="Namespace the token may use (repeat for several).",
        )
        parser.add_argument(
            "--read-only", action="store_true", help="The token may search and read, not write."
        )
        parser.add_argument(
            "--trusted",
            action="store_true",
            help="Its writes do not wait under review 'all', and it may approve or reject "
            "memories that others wrote (an importer in CI, say).",
        )
        parser.add_argument("--name", default="", help="A label shown in the admin.")

    def handle(
        self, *args, namespace: list[str], read_only: bool, trusted: bool, name: str, **options
    ):
        try:
            namespaces = [namespace_get_or_create(name=ns_name) for ns_name in namespace]
            token, raw = token_create(
                name=name or f"cli:{','.join(namespace)}",
                namespaces=namespaces,
                read_only=read_only,
                trusted=trusted,
            )
        except ValidationFailed as exc:
            raise CommandError(exc.summary()) from None
        mode = ("read-only" if read_only else "read-write") + (", trusted" if trusted else "")
        self.stderr.write(
            f"Created {mode} token '{token.name}' for {', '.join(namespace)}. "
            "Store it now: it is not shown again."
        )
        self.stdout.write(raw)
