from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from apps.core.backup import BackupError, backup


class Command(BaseCommand):
    help = (
        "Back up memoryhub's database (pg_dump, custom format) with a manifest of the embedding "
        "model, memoryhub version and migrations, into one tar file."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path, help="File to write, e.g. backups/2026-01-01.tar")

    def handle(self, *args, path: Path, **options):
        try:
            backup(path, say=self.stdout.write)
        except BackupError as exc:
            raise CommandError(str(exc)) from exc
