from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from apps.core.backup import BackupError, check_compatible, read_manifest, restore


class Command(BaseCommand):
    help = (
        "Restore a backup written by `manage.py backup`. Everything in the configured database "
        "(all namespaces, memories, users, tokens, logs) is replaced by the backup's contents."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path)
        parser.add_argument("--yes", action="store_true", help="Do not ask for confirmation")
        parser.add_argument(
            "--force",
            action="store_true",
            help="Restore even if the backup's embedding model differs (re-embed afterwards)",
        )

    def handle(self, *args, path: Path, yes: bool, force: bool, **options):
        try:
            manifest = read_manifest(path)
            check_compatible(manifest, force=force)  # refuse before asking anything
            target = settings.DATABASES["default"]["NAME"]
            self.stdout.write(
                f"Backup {path}: taken {manifest.created_at} by memoryhub "
                f"{manifest.memoryhub_version}, model {manifest.embedding_model} "
                f"({manifest.embedding_dim} dimensions), {manifest.counts.get('memories')} "
                f"memories in {manifest.counts.get('namespaces')} namespaces."
            )
            if not yes:
                answer = input(
                    f"This DELETES everything in database {target!r} and replaces it with the "
                    "backup. Type 'yes' to go on: "
                )
                if answer.strip().lower() != "yes":
                    raise CommandError("Restore cancelled; nothing changed.")
            restore(path, force=force, say=self.stdout.write)
        except BackupError as exc:
            raise CommandError(str(exc)) from exc
