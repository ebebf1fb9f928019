"""Recall at session start (docs/session-start.md): REST search answers `Accept: text/markdown`
with the MCP memory_search tool's own text, and the documented Claude Code SessionStart hook,
run by bash from inside a git repository exactly as docs/session-start.md has it (the server
and namespace put in for the placeholders, the token from the environment), prints the
namespace's memories about that repository first. The Connect page offers the same command."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import time
from pathlib import Path

import httpx
import pytest
from django.contrib.auth import get_user_model

from apps.access.models import Role
from apps.access.services import membership_set, token_create
from apps.memories.models import Namespace
from apps.ui.views.connect import claude_code_hook, session_start_command
from tests import factories
from tests.mcp.client import http_client, run, text_of

DOC = Path(__file__).resolve().parents[2] / "docs" / "session-start.md"
PLACEHOLDER_URL = "https://memory.example.com"
PLACEHOLDER_NAMESPACE = "NAMESPACE"
REPOSITORY, BRANCH = "billing-gateway", "retry-queue"

ABOUT_THE_REPOSITORY = [
    "billing-gateway sends every charge through its Stripe adapter; views never call Stripe.",
    "In billing-gateway, failed charges go to the retry queue and are retried with "
    "exponential backoff, at most five times.",
    "The billing-gateway retry-queue worker must be idempotent: each charge carries an "
    "idempotency key.",
]
ELSEWHERE = [
    "The office coffee machine is descaled every Friday morning.",
    "The marketing website is built with Hugo and published from its own repository.",
    "Team lunch is on Thursdays at the Italian place around the corner.",
]

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def payments(transactional_db, embedding_model):
    namespace = Namespace.objects.create(name="payments")
    factories.memories(namespace, ELSEWHERE + ABOUT_THE_REPOSITORY)
    token = token_create(name="hook", namespaces=[namespace], read_only=True)[1]
    return namespace, token


def _documented_hook() -> str:
    """The command of the settings.json block under the Claude Code heading, as written."""
    text = DOC.read_text()
    start = text.index("```json\n", text.index("## Claude Code")) + len("```json\n")
    settings = json.loads(text[start : text.index("```", start)])
    (entry,) = settings["hooks"]["SessionStart"]
    (hook,) = entry["hooks"]
    assert hook["type"] == "command"
    return hook["command"]


def _repository(tmp_path: Path) -> Path:
    checkout = tmp_path / REPOSITORY
    checkout.mkdir()
    subprocess.run(["git", "init", "-q", "-b", BRANCH], cwd=checkout, check=True)
    return checkout


def _run_hook(command: str, checkout: Path, token: str) -> subprocess.CompletedProcess:
    # Claude Code runs the command with bash in the project directory, in its environment.
    env = {**os.environ, "MEMORYHUB_TOKEN": token}
    return subprocess.run(
        ["bash", "-c", command], cwd=checkout, env=env, capture_output=True, text=True, timeout=60
    )


def test_the_documented_hook_prints_the_repositorys_memories_first(asgi_server, payments, tmp_path):
    assert shutil.which("curl") and shutil.which("git")
    namespace, token = payments
    command = _documented_hook()
    assert "mh_" not in command and "$MEMORYHUB_TOKEN" in command  # never a pasted token
    command = command.replace(PLACEHOLDER_URL, asgi_server)
    command = command.replace(PLACEHOLDER_NAMESPACE, namespace.name)
    checkout = _repository(tmp_path)

    done = _run_hook(command, checkout, token)

    assert done.returncode == 0, done.stderr
    printed = done.stdout
    positions = {memory: printed.find(memory) for memory in ABOUT_THE_REPOSITORY}
    assert all(at >= 0 for at in positions.values()), printed
    elsewhere = [printed.find(memory) for memory in ELSEWHERE if memory in printed]
    assert all(at > max(positions.values()) for at in elsewhere), printed
    assert not printed.lstrip().startswith("{")  # the text, not the JSON

    # How long a session waits for it on a warm server (reported, not asserted).
    timings = []
    for _ in range(7):
        started = time.perf_counter()
        again = _run_hook(command, checkout, token)
        timings.append(time.perf_counter() - started)
        assert again.returncode == 0
    print(
        f"\nSessionStart hook, warm server: median {statistics.median(timings) * 1000:.0f} ms, "
        f"min {min(timings) * 1000:.0f} ms, max {max(timings) * 1000:.0f} ms over 7 runs"
    )


def test_the_hook_says_what_is_wrong_with_a_bad_token(asgi_server, payments, tmp_path):
    namespace, _ = payments
    command = _documented_hook().replace(PLACEHOLDER_URL, asgi_server)
    command = command.replace(PLACEHOLDER_NAMESPACE, namespace.name)
    done = _run_hook(command, _repository(tmp_path), "mh_not_a_token")
    # What the assistant sees, so it can tell the person.
    assert done.stdout == "Error: Invalid or revoked API token.\n"


def test_markdown_search_is_the_mcp_tools_text_and_json_stays_the_default(asgi_server, payments):
    namespace, token = payments
    params = {"query": f"{REPOSITORY} {BRANCH}", "namespace": namespace.name}
    url = f"{asgi_server}/api/v1/search/"
    auth = {"Authorization": f"Bearer {token}"}

    markdown = httpx.get(url, params=params, headers={**auth, "Accept": "text/markdown"})
    assert markdown.status_code == 200
    assert markdown.headers["content-type"] == "text/markdown; charset=utf-8"
    assert "Accept" in markdown.headers["vary"]
    default = httpx.get(url, params=params, headers=auth)
    assert default.headers["content-type"] == "application/json"
    assert default.json()["text"] == markdown.text
    posted = httpx.post(url, json=params, headers={**auth, "Accept": "text/markdown"})
    assert posted.text == markdown.text

    async def scenario():
        async with http_client(asgi_server, token) as client:
            return await client.call_tool("memory_search", params)

    assert text_of(run(scenario)) == markdown.text
    assert ABOUT_THE_REPOSITORY[1] in markdown.text


def test_markdown_errors_name_the_field(asgi_server, payments):
    namespace, token = payments
    headers = {"Authorization": f"Bearer {token}", "Accept": "text/markdown"}
    url = f"{asgi_server}/api/v1/search/"
    bad = httpx.get(url, params={"query": "x", "limit": "many"}, headers=headers)
    assert bad.status_code == 400
    assert bad.headers["content-type"].startswith("text/markdown")
    assert bad.text.startswith("Error: invalid input.\n- limit: ")
    unknown = httpx.get(url, params={"query": "x", "namespace": "nowhere"}, headers=headers)
    assert unknown.status_code in (403, 404) and unknown.text.startswith("Error: ")
    anonymous = httpx.get(url, params={"query": "x"}, headers={"Accept": "text/markdown"})
    assert anonymous.status_code == 401 and anonymous.text.startswith("Error: ")


def test_the_connect_page_offers_the_documented_hook_and_cursor_rule(client, payments):
    namespace, _ = payments
    owner = get_user_model().objects.create_user("owner", password="pw-owner-123456")
    membership_set(namespace=namespace, user=owner, role=Role.OWNER)
    client.force_login(owner)

    page = client.get(f"/ns/{namespace.name}/connect/")

    assert page.status_code == 200
    snippets = {s["key"]: s["text"] for s in page.context["session_start"]}
    command = session_start_command("http://testserver", namespace.name)
    documented = _documented_hook()
    assert documented == session_start_command(PLACEHOLDER_URL, PLACEHOLDER_NAMESPACE)
    assert json.loads(snippets["claude-code-session-start"]) == json.loads(
        claude_code_hook(command)
    )
    assert snippets["session-start-command"] == command
    assert f'namespace "{namespace.name}"' in snippets["cursor-rule"]
    assert "alwaysApply: true" in snippets["cursor-rule"]
    html = page.content.decode()
    assert 'id="session-start"' in html and "mh_" not in snippets["claude-code-session-start"]
