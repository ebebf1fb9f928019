"""Who may import and export: viewers export, editors also import, other namespaces are 404;
a file over the size limit is refused naming the field."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from apps.access.models import NamespaceMembership, Role
from apps.memories import services
from apps.memories.models import Memory
from apps.transfer import import_runs

from .conftest import PASSWORD, make_user

pytestmark = pytest.mark.django_db

RUN = "6f1c1f9e-0d43-4a8e-9b1a-3f2f64c8e0aa"


@pytest.fixture
def acme(db, embedding_model):
    acme = services.namespace_get_or_create(name="acme")
    beta = services.namespace_get_or_create(name="beta")
    services.memory_create(namespace=acme, content="Deploys happen on Tuesdays", category="fact")
    services.memory_create(namespace=beta, content="Beta's secret plan")
    for name, role, namespace in [("vera", Role.VIEWER, acme), ("eddie", Role.EDITOR, acme)]:
        NamespaceMembership.objects.create(user=make_user(name), namespace=namespace, role=role)
    return acme


def _client(username: str) -> Client:
    client = Client()
    assert client.login(username=username, password=PASSWORD)
    return client


def _file(content: bytes = b'{"content": "Imported by a test"}\n') -> SimpleUploadedFile:
    return SimpleUploadedFile("m.jsonl", content, content_type="application/x-ndjson")


async def _read(response) -> bytes:
    """The body of a streamed response (an asynchronous stream, as ASGI serves it)."""
    return b"".join([piece async for piece in response.streaming_content])


def test_viewer_exports_but_cannot_import(acme):
    vera = _client("vera")
    page = vera.get("/ns/acme/transfer/")
    assert page.status_code == 200
    assert b'id="export-jsonl"' in page.content and b'id="import-form"' not in page.content
    assert vera.post("/ns/acme/transfer/import/", {"file": _file()}).status_code == 403
    response = vera.get("/ns/acme/export.jsonl")
    assert response.streaming
    lines = async_to_sync(_read)(response).decode().splitlines()
    assert [json.loads(line)["content"] for line in lines] == ["Deploys happen on Tuesdays"]
    assert not Memory.objects.filter(content="Imported by a test").exists()


def test_other_namespaces_are_not_found(acme):
    eddie = _client("eddie")
    for url in ("/ns/beta/transfer/", "/ns/beta/export.jsonl", "/ns/beta/export.zip"):
        assert eddie.get(url).status_code == 404, url
    assert eddie.post("/ns/beta/transfer/import/", {"file": _file()}).status_code == 404
    assert Client().get("/ns/acme/export.jsonl").status_code == 302  # to the login page


def test_an_oversized_upload_is_refused_naming_the_field(acme, settings):
    settings.IMPORT_MAX_BYTES = 10
    response = _client("eddie").post("/ns/acme/transfer/import/", {"file": _file()})
    assert response.status_code == 400
    assert b"file: Is 34 bytes; the limit is 10 bytes." in response.content


def test_another_users_import_run_is_not_found(acme, settings, tmp_path):
    settings.IMPORT_DIR = tmp_path
    eddie = get_user_model().objects.get(username="eddie")
    import_runs._save({"id": RUN, "namespace": "acme", "user": eddie.pk, "phase": "done"})
    NamespaceMembership.objects.create(user=make_user("edna"), namespace=acme, role=Role.EDITOR)
    assert _client("edna").get(f"/ns/acme/transfer/import/{RUN}/").status_code == 404
    assert _client("vera").get(f"/ns/acme/transfer/import/{RUN}/").status_code == 403
