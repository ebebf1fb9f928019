"""`manage.py export_bench` grows its namespace through the write path plus copies, links it,
and hands out a session that can download the export."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from asgiref.sync import async_to_sync
from django.core.management import call_command
from django.test import Client

from apps.memories.models import CausalEdge, Memory

pytestmark = pytest.mark.django_db

TEXTS = [
    "The backup job copies the database to the NAS every night at two.",
    "The staging cluster runs three web workers behind nginx.",
    "Redis holds the Celery broker queue on database two.",
    "The HNSW index is rebuilt after a bulk import.",
]


def test_export_bench_builds_a_namespace_a_session_can_export(tmp_path, embedding_model):
    with (tmp_path / "memories.jsonl").open("w") as out:
        for text in TEXTS:
            out.write(json.dumps({"content": text, "tags": ["ops"]}) + "\n")
    out = StringIO()

    call_command(
        "export_bench", size=150, write_path=4, source=tmp_path, namespace="export-check",
        cookie=True, stdout=out, stderr=StringIO(),
    )  # fmt: skip

    memories = Memory.objects.filter(namespace__name="export-check")
    assert memories.count() == 150
    assert memories.filter(metadata__has_key="copy_of").count() == 146
    assert CausalEdge.objects.filter(namespace__name="export-check").count() == 2
    report = out.getvalue()
    assert "export-check: 150 memories, 2 links" in report

    client = Client()
    client.cookies["sessionid"] = report.split("sessionid=")[1].strip()
    response = client.get("/ns/export-check/export.jsonl")
    assert response.status_code == 200
    lines = async_to_sync(_read)(response).decode().splitlines()
    contents = [json.loads(line).get("content") for line in lines]
    assert sum(1 for content in contents if content) == 150


async def _read(response) -> bytes:
    """The body of the streamed export (an asynchronous stream, as ASGI serves it)."""
    return b"".join([piece async for piece in response.streaming_content])
