"""Backups that restore: back up, wipe, restore, and the same searches give the same results;
a backup made by another embedding model is refused. Real embedded PostgreSQL, real pg_dump /
pg_restore, real model."""

from __future__ import annotations

import json
import tarfile

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.core.backup import MANIFEST_NAME, read_manifest
from apps.memories.models import Memory, Namespace
from apps.search.services import search
from tests import factories

pytestmark = pytest.mark.django_db(transaction=True)  # pg_dump sees only committed rows

CONTENTS = [
    "Zanzibar deployment checklist: drain the queue, run migrations, then flip the flag.",
    "The Zanzibar service keeps its deployment notes in the ops wiki.",
    "Postgres vacuum settings were tuned for the large events table.",
    "We chose Redis as the Celery broker because it is already in the stack.",
    "Login page shows a spinner forever when the session cookie expired.",
    "Prefer dataclasses over dicts for values passed between pipeline stages.",
    "Backups are taken nightly with pg_dump and kept for two weeks.",
]
QUERIES = ["deployment checklist", "which broker does Celery use", "nightly backups", "cookie"]


def _results(namespace_name: str) -> dict[str, list[tuple[str, float]]]:
    ns = Namespace.objects.get(name=namespace_name)
    return {
        q: [
            (str(m["id"]), round(m["score"], 6))
            for m in search(namespace=ns, query=q, log=False).memories
        ]
        for q in QUERIES
    }


def test_backup_wipe_restore_gives_identical_search_results(tmp_path, embedding_model):
    ns = factories.namespace("backup-ns")
    factories.memories(ns, CONTENTS)
    before = _results("backup-ns")
    assert all(before.values())
    path = tmp_path / "memoryhub.tar"

    call_command("backup", str(path))
    manifest = read_manifest(path)
    assert manifest.embedding_model == "all-MiniLM-L6-v2" and manifest.embedding_dim == 384
    assert manifest.counts == {"namespaces": 1, "memories": len(CONTENTS)}
    assert "memories.0001_vector_extension" in manifest.migrations

    Namespace.objects.all().delete()  # the wipe: every namespace and its memories
    assert not Memory.objects.exists()

    call_command("restore", str(path), "--yes")
    assert Memory.objects.count() == len(CONTENTS)
    assert _results("backup-ns") == before


def _with_model(path, tmp_path, model: str):
    """A copy of the backup at `path` whose manifest names another model."""
    with tarfile.open(path) as tar:
        manifest = json.loads(tar.extractfile(MANIFEST_NAME).read())
        dump = tar.extractfile("memoryhub.dump").read()
    manifest["embedding_model"] = model
    (tmp_path / MANIFEST_NAME).write_text(json.dumps(manifest))
    (tmp_path / "memoryhub.dump").write_bytes(dump)
    changed = tmp_path / "other-model.tar"
    with tarfile.open(changed, "w") as tar:
        tar.add(tmp_path / MANIFEST_NAME, arcname=MANIFEST_NAME)
        tar.add(tmp_path / "memoryhub.dump", arcname="memoryhub.dump")
    return changed


def test_restore_refuses_a_backup_from_another_embedding_model(tmp_path, embedding_model):
    ns = factories.namespace("kept-ns")
    factories.memories(ns, CONTENTS[:2])
    path = tmp_path / "memoryhub.tar"
    call_command("backup", str(path))
    other = _with_model(path, tmp_path, "some-other-model")
    ns.delete()

    with pytest.raises(CommandError, match="re-embed"):
        call_command("restore", str(other), "--yes")
    assert not Namespace.objects.exists()  # nothing was touched

    call_command("restore", str(other), "--yes", "--force")
    assert Memory.objects.filter(namespace__name="kept-ns").count() == 2


def test_restore_of_a_file_that_is_not_a_backup_is_refused(tmp_path, db):
    junk = tmp_path / "junk.tar"
    junk.write_text("not a tar")
    with pytest.raises(CommandError, match="not a memoryhub backup"):
        call_command("restore", str(junk), "--yes")
