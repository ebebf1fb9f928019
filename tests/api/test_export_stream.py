"""Exports stream under ASGI (an asynchronous iterator: Django does not read the file into
memory first), and a client that hangs up mid-download is logged as 499, not as a 500."""

from __future__ import annotations

import json
import socket
import time
from urllib.parse import urlsplit

import httpx
import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from apps.memories.models import Namespace
from tests.factories import bare_memories

from .test_observability import _access_lines, json_log  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db(transaction=True)

ROWS = 4000
FILLER = "a line of an exported memory that makes the file a few megabytes long. " * 12


@pytest.fixture
def bulk():
    namespace = Namespace.objects.create(name="bulk")
    bare_memories(namespace, ROWS, lambda i: {"content": f"{i} {FILLER}"})
    admin = get_user_model().objects.create_superuser("exporter", password="pw-for-tests")
    client = Client()
    client.force_login(admin)
    return client


def test_the_export_is_an_async_stream_of_every_memory(asgi_server, bulk):
    response = bulk.get("/ns/bulk/export.jsonl")
    assert response.streaming and response.is_async  # served without reading it whole first
    cookies = {"sessionid": bulk.cookies["sessionid"].value}
    # A generous read timeout: on a loaded CI machine a pause between chunks can pass httpx's
    # default 5 s, and this test is about streaming, not speed.
    export_url = f"{asgi_server}/ns/bulk/export.jsonl"
    with httpx.stream("GET", export_url, cookies=cookies, timeout=60) as live:
        assert live.status_code == 200 and "content-length" not in live.headers
        pieces = [piece for piece in live.iter_bytes() if piece]
    lines = b"".join(pieces).decode().splitlines()
    assert len(lines) == ROWS and json.loads(lines[0])["namespace"] == "bulk"
    assert len(pieces) > 1


def test_a_client_that_hangs_up_mid_download_is_logged_as_499(asgi_server, bulk, json_log):  # noqa: F811
    address = urlsplit(asgi_server)
    session = bulk.cookies["sessionid"].value
    with socket.create_connection((address.hostname, address.port)) as sock:
        request = (
            f"GET /ns/bulk/export.jsonl HTTP/1.1\r\nHost: {address.netloc}\r\n"
            f"Cookie: sessionid={session}\r\n\r\n"
        )
        sock.sendall(request.encode())
        assert b"200 OK" in sock.recv(4096)  # the download started; leave now
    lines = []
    deadline = time.monotonic() + 20
    while not lines and time.monotonic() < deadline:
        lines = _access_lines(json_log, "/ns/bulk/export.jsonl")
    assert [line["status"] for line in lines] == [499]
