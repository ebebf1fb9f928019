"""In a real browser: an import file over the general request limit (5 MB) but within the
import limit is accepted; one over the import limit is refused with the reason on the page. A
client that stops sending a request body is answered 408 instead of holding a worker."""

from __future__ import annotations

import json
import socket
import time
from urllib.parse import urlparse

import pytest
from django.test import override_settings
from playwright.sync_api import expect

from .conftest import login

pytestmark = pytest.mark.django_db(transaction=True)


def _jsonl(path, megabytes: float) -> None:
    """`megabytes` of lines that are JSON but no records: the import reads the whole file and
    refuses it, writing nothing (the size is what is tested)."""
    line = json.dumps("x" * 1000) + "\n"
    path.write_text(line * int(megabytes * 1024 * 1024 / len(line)))


def test_an_upload_over_five_megabytes_reaches_the_import(page, admin_user, acme, tmp_path):
    path = tmp_path / "six.jsonl"
    _jsonl(path, 6)
    login(page, "admin")
    page.goto("/ns/acme/transfer/")
    page.set_input_files("#import-file", str(path))
    page.click("#import-form button[type=submit]")
    # The import read all of it (and refused its lines, which are no records).
    expect(page.locator("#import-result")).to_contain_text("Nothing imported", timeout=60_000)
    expect(page.locator("#run")).to_contain_text("line 1")


@override_settings(IMPORT_MAX_BYTES=1024 * 1024)
def test_an_upload_over_the_import_limit_is_refused_on_the_page(page, admin_user, acme, tmp_path):
    path = tmp_path / "big.jsonl"
    _jsonl(path, 2)
    login(page, "admin")
    page.goto("/ns/acme/transfer/")
    page.set_input_files("#import-file", str(path))
    page.click("#import-form button[type=submit]")
    report = page.locator("#run .import-report.failed")
    expect(report).to_contain_text("Nothing imported")
    expect(report).to_contain_text(f"the limit is {1024 * 1024 + 64 * 1024} bytes")


@override_settings(REQUEST_BODY_TIMEOUT_S=1)
def test_a_half_sent_request_body_is_answered_408(asgi_server):
    url = urlparse(asgi_server)
    with socket.create_connection((url.hostname, url.port), timeout=10) as sock:
        sock.sendall(
            b"POST /api/v1/memories/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"content": '
        )
        started = time.monotonic()
        answer = sock.recv(4096)
    assert answer.startswith(b"HTTP/1.1 408")
    assert time.monotonic() - started < 5
