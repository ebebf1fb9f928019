"""Every curl example of docs/using.md (where the README sends a reader for REST) runs as
written against a fresh server: the block is read from that page, given a real token and the
server's address, and each command is run by bash and curl in order, the ids the page leaves as
placeholders taken from the answers before."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from apps.access.services import token_create
from apps.memories.models import Namespace

README = Path(__file__).resolve().parents[2] / "docs" / "using.md"
pytestmark = pytest.mark.django_db(transaction=True)


def _curl_block() -> str:
    text = README.read_text()
    start = text.index("```sh\n", text.index("### REST with curl")) + len("```sh\n")
    return text[start : text.index("```", start)]


def _commands(block: str) -> tuple[list[str], list[str]]:
    """(the variable lines, each curl command with its continuation lines joined)."""
    joined = re.sub(r"\\\n\s*", "", block)
    lines = [line for line in joined.splitlines() if line.strip() and not line.startswith("#")]
    setup = [line for line in lines if not line.startswith("curl ")]
    return setup, [line for line in lines if line.startswith("curl ")]


def test_every_readme_curl_example_runs_against_a_fresh_server(asgi_server, embedding_model):
    assert shutil.which("curl"), "the README's examples need curl"
    namespace = Namespace.objects.create(name="myproject")  # as `create_token` would make it
    token = token_create(name="readme", namespaces=[namespace])[1]
    setup, commands = _commands(_curl_block())
    assert setup[:2] == ["TOKEN=mh_YOUR_TOKEN", "API=http://127.0.0.1:8000/api/v1"]
    prelude = "\n".join(setup).replace("mh_YOUR_TOKEN", token)
    prelude = prelude.replace("http://127.0.0.1:8000", asgi_server)
    ids: dict[str, str] = {}
    answers = []
    for command in commands:
        for name, value in ids.items():
            command = command.replace(name, value)
        assert not re.search(r"\b[A-Z]+_ID\b", command), f"no id yet for: {command}"
        done = subprocess.run(
            ["bash", "-c", f"{prelude}\n{command} -w '\\n%{{http_code}}'"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        body, _, status = done.stdout.rpartition("\n")
        assert done.returncode == 0 and status.startswith("2"), (command, status, body[:500])
        data = json.loads(body) if body.strip() else None
        answers.append((command, data))
        _remember_ids(command, data, ids)

    searches = [data for command, data in answers if "$API/search/" in command]
    assert all(data["memories"] for data in searches), "a search example finds nothing"
    assert searches[-1]["memories"][0]["id"] == ids["MEMORY_ID"]  # the tag filter's memory
    listed = next(data for command, data in answers if "category=warning" in command)
    assert [m["content"] for m in listed["results"]] == ["Avoid migrations on Fridays."]
    trash = next(data for command, data in answers if "$API/trash/ " in command)
    assert trash["results"][0]["memory_id"] == ids["MEMORY_ID"]


def _remember_ids(command: str, data, ids: dict[str, str]) -> None:
    """The ids the later examples stand for, from the answer of the one that made them."""
    if "-X POST $API/memories/ " in command:
        ids["MEMORY_ID"] = ids["OLD_ID"] = data["memory"]["id"]
    elif "-X POST $API/memories/batch/" in command and "status_url" in data:
        ids["JOB_ID"] = data["id"]  # a batch left to the background
    elif "-X POST $API/memories/batch/" in command:
        ids["NEW_ID"] = data["results"][0]["memory"]["id"]
    elif "-X POST $API/search/" in command:
        ids['"query_log_id": 42'] = f'"query_log_id": {data["query_log_id"]}'
    elif "-X POST $API/edges/" in command:
        ids["EDGE_ID"] = str(data["id"])
    elif command.startswith("curl -s $API/memories/") and "/revisions/ " in command:
        ids["REVISION_ID"] = str(data["results"][-1]["id"])  # the first version
    elif "-G $API/trash/" in command:
        ids["TRASH_ID"] = str(data["results"][0]["id"])
