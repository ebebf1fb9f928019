"""Imports forgive and never lose: a text said again at another time (or under another id) is a
memory of its own, an exact repeat is skipped and counted, importing the same file again adds
and changes nothing and says so, and a file with bad lines names every one of them at once,
JSON errors included, and writes nothing. Through the CLI and the web upload."""

from __future__ import annotations

import json
import re
import time
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client

from apps.history.models import MemoryRevision
from apps.memories.models import Memory, Namespace

pytestmark = pytest.mark.django_db(transaction=True)

THANKS = "Ana: Thanks, see you tomorrow!"
CONVERSATION = [
    {"content": "Ana: Are we still on for lunch?", "created_at": "2023-05-08T12:00:00Z"},
    {"content": THANKS, "created_at": "2023-05-08T12:01:00Z"},
    {"content": "Ben: Sure, noon at the usual place.", "created_at": "2023-05-09T09:00:00Z"},
    {"content": THANKS, "created_at": "2023-05-09T09:01:00Z"},  # the same words, another day
    {"content": THANKS, "created_at": "2023-05-09T09:01:00Z"},  # an exact repeat
    {"id": "D3:1", "content": THANKS, "created_at": "2023-05-10T10:00:00Z"},
    {"id": "D3:2", "content": THANKS, "created_at": "2023-05-10T10:00:00Z"},  # another turn
]
BAD = [
    '{"content": "A fine line"}',
    '{"content": "no closing brace"',
    '{"content": "Gossip", "category": "gossip"}',
    "[1, 2]",
    '{"content": "When?", "created_at": "the day after never"}',
]


def _jsonl(records) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def _state(namespace: str) -> list[tuple]:
    rows = Memory.objects.filter(namespace__name=namespace).order_by("created_at", "external_id")
    return list(rows.values_list("id", "content", "created_at", "external_id", "updated_at"))


def _import(path, namespace: str, workers: int = 1) -> str:
    out = StringIO()
    call_command(
        "import_memories",
        str(path),
        "--namespace",
        namespace,
        "--no-progress",
        "--workers",
        str(workers),
        stdout=out,
    )
    return out.getvalue()


@pytest.mark.parametrize("workers", [1, 2])
def test_cli_imports_a_conversation_with_repeated_lines_and_a_second_time_adds_nothing(
    tmp_path, embedding_model, workers
):
    path = tmp_path / "chat.jsonl"
    path.write_text(_jsonl(CONVERSATION))
    # The exact repeat is named as such, not counted as "already stored" (nothing was).
    assert "6 new, 0 already stored, 1 repeated line skipped (line 5)" in _import(
        path, "chat", workers
    )
    stored = _state("chat")
    assert [row[1] for row in stored].count(THANKS) == 4
    revisions = MemoryRevision.objects.count()

    again = _import(path, "chat", workers)
    assert "0 new, 6 already stored, 1 repeated line skipped (line 5)" in again
    assert _state("chat") == stored  # nothing added, nothing changed
    assert MemoryRevision.objects.count() == revisions


def test_a_repeated_id_is_a_repeat_whatever_its_text(tmp_path, embedding_model):
    records = [
        {"id": "n1", "content": "The VPN uses WireGuard."},
        {"id": "n2", "content": "The VPN gateway is in Amsterdam."},
        {"id": "n1", "content": "The VPN uses WireGuard since May."},
    ]
    path = tmp_path / "notes.jsonl"
    path.write_text(_jsonl(records))
    assert "2 new, 0 already stored, 1 repeated line skipped (line 3)" in _import(path, "vpn")
    kept = Memory.objects.get(namespace__name="vpn", external_id="n1")
    assert kept.content == "The VPN uses WireGuard."  # the first line is the one written


def test_cli_names_every_bad_line_in_one_pass_and_writes_nothing(tmp_path, embedding_model):
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(BAD) + "\n")
    with pytest.raises(CommandError) as caught:
        _import(path, "bad")
    report = str(caught.value)
    assert "Nothing imported." in report
    problems = report.splitlines()[1:]
    assert [p.split(":")[0] for p in problems] == ["line 2", "line 3", "line 4", "line 5"]
    assert problems[0].startswith("line 2: Not valid JSON")
    assert problems[1].startswith("line 3: category:")
    assert problems[3].startswith("line 5: created_at:")
    assert not Memory.objects.filter(content="A fine line").exists()
    assert not Namespace.objects.filter(name="bad").exists()


def _upload(client: Client, name: str, text: str) -> str:
    upload = SimpleUploadedFile(name, text.encode(), content_type="application/x-ndjson")
    started = client.post("/ns/chat/transfer/import/", {"file": upload})
    assert started.status_code == 200
    run_id = re.search(r"/transfer/import/([0-9a-f-]{36})/", started.content.decode()).group(1)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        page = client.get(f"/ns/chat/transfer/import/{run_id}/").content.decode()
        if 'data-phase="done"' in page or 'data-phase="failed"' in page:
            return page
        time.sleep(0.3)
    raise AssertionError("the import did not finish")


def test_the_upload_imports_repeats_and_a_second_upload_adds_nothing(embedding_model):
    Namespace.objects.create(name="chat")
    get_user_model().objects.create_superuser("admin", password="pw-for-tests")
    client = Client()
    assert client.login(username="admin", password="pw-for-tests")

    first = _upload(client, "chat.jsonl", _jsonl(CONVERSATION))
    assert "Imported: 6 new, 0 already stored" in first
    repeat = "1 line of the file repeated an earlier line (the same id, or the same text at the "
    assert repeat in first and "was skipped: line 5." in first
    stored = _state("chat")
    again = _upload(client, "chat.jsonl", _jsonl(CONVERSATION))
    assert "Imported: 0 new, 6 already stored" in again and "was skipped: line 5." in again
    assert _state("chat") == stored

    rejected = _upload(client, "bad.jsonl", "\n".join(BAD) + "\n")
    assert "Nothing imported: 4 problems found." in rejected
    for line in ("line 2: Not valid JSON", "line 3: category:", "line 4:", "line 5: created_at:"):
        assert line in rejected
    assert _state("chat") == stored
