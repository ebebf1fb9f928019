"""`make run` alone is the whole product: `manage.py serve` (what it runs) with no broker serves
two web processes, and one of them runs the periodic jobs on its schedule.

The server is a subprocess on this session's test database (EMBEDDED_DATABASE_NAME), with the
default schedule: what a newcomer sees. It takes about two minutes (usage counts wait for the
search log to settle for a minute, then for the next run).
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import httpx
import pytest
from django.db.models import Q

from apps.access.services import token_create
from apps.jobs.models import JobRun
from apps.memories.models import Memory, Namespace, Passage, PendingTurn
from apps.queues.models import DuplicatePair
from tests.api.live import free_port
from tests.served import serve, stop

pytestmark = pytest.mark.django_db(transaction=True)

TWINS = (
    "The billing service retries a failed card charge three times, an hour apart, then emails.",
    "The billing service retries a failed card charge three times, one hour apart, then emails.",
)


def _children(pid: int) -> set[int]:
    """Every live descendant of `pid` (from /proc)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            parents.setdefault(ppid, []).append(int(entry.name))
    found, todo = set(), [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def _wait_ready(client: httpx.Client, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert process.poll() is None, "the server exited"
        try:
            if client.get("/healthz").status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    raise AssertionError("the server did not become ready")


def test_make_run_alone_counts_usage_ranks_links_and_queues_near_duplicates(embedding_model):
    namespace = Namespace.objects.create(name="newcomer")
    token = token_create(name="laptop", namespaces=[namespace])[1]
    port = free_port()
    # The 20-turn batch below is large enough to be stored outside the HNSW index.
    process = serve(port, VECTOR_INDEX_BEHIND_MIN="20")
    headers = {"Authorization": f"Bearer {token}"}
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            _wait_ready(client, process)
            api = "/api/v1"

            def write(text: str) -> str:
                response = client.post(f"{api}/memories/", json={"content": text}, headers=headers)
                assert response.status_code == 201, response.text
                return response.json()["memory"]["id"]

            # A conversation of 20 turns in one batch: more than DIALOG_PASSAGES_INLINE_MAX,
            # so the turns' previous-turn passages are left to the scheduler's job, and as many
            # as VECTOR_INDEX_BEHIND_MIN, so their vectors wait for the vector_index job.
            turns = [
                {
                    "content": f"Sam: on day {i} of the trip we hiked to lake number {i}.",
                    "external_id": f"trip:D1:{i}",
                    "created_at": "2024-07-01T09:00:00Z",
                }
                for i in range(1, 21)
            ]
            stored = client.post(f"{api}/memories/batch", json={"items": turns}, headers=headers)
            assert stored.status_code == 201, stored.text
            assert _outside_index(namespace) == 20
            first, second = (write(text) for text in TWINS)
            hub = write("Our staging cluster runs on two small VMs in Frankfurt.")
            notes = write("Release notes are written by whoever merges the last pull request.")
            written = time.monotonic()

            def rank(memory_id: str) -> float:
                body = client.get(f"{api}/memories/{memory_id}/", headers=headers).json()
                return body["pagerank_score"]

            before = rank(hub)
            for source in (first, second, notes):
                link = {"source": source, "target": hub, "relation": "depends_on"}
                assert client.post(f"{api}/edges/", json=link, headers=headers).status_code == 201
            assert rank(hub) > before and rank(hub) > rank(notes)  # the links moved PageRank

            for query in ("where does staging run?", "staging cluster in Frankfurt", "staging VMs"):
                found = client.post(f"{api}/search/", json={"query": query}, headers=headers)
                assert hub in [m["id"] for m in found.json()["memories"]]
            searched = time.monotonic()

            usage_after = pair_after = None
            while time.monotonic() - searched < 180 and (
                usage_after is None
                or pair_after is None
                or _previous_turns(namespace) < 19
                or _outside_index(namespace)
            ):
                if (
                    pair_after is None
                    and DuplicatePair.objects.filter(
                        Q(first_id=first, second_id=second) | Q(first_id=second, second_id=first)
                    ).exists()
                ):
                    pair_after = time.monotonic() - written
                body = client.get(f"{api}/memories/{hub}/", headers=headers).json()
                if usage_after is None and body["access_count"] >= 3:
                    usage_after = time.monotonic() - searched
                time.sleep(2)
            assert usage_after is not None and usage_after < 180, "usage counts never came"
            assert pair_after is not None and pair_after < 300, "the pair was never queued"
            assert body["access_count"] == 3
            assert _previous_turns(namespace) == 19, "the queued dialog turns were never written"
            assert not PendingTurn.objects.exists()
            assert _outside_index(namespace) == 0, "the batch never entered the HNSW index"

            health = client.get("/healthz").json()["jobs"]
            assert health["runner"] == "this server (no broker)"
            ran = {"decay", "near_duplicates", "pagerank", "dialog_passages", "vector_index"}
            assert ran <= set(health["last_runs"])
    finally:
        output = stop(process)
    # One process of the two ran the schedule; both stopped with the command.
    scheduled = JobRun.objects.filter(trigger__startswith="scheduler")
    assert scheduled.exists()
    assert len(set(scheduled.values_list("worker", flat=True))) == 1, output[-3000:]
    assert "Traceback" not in output, output[-3000:]


def _outside_index(namespace: Namespace) -> int:
    return Memory.objects.filter(namespace=namespace, vector_indexed=False).count()


def _previous_turns(namespace: Namespace) -> int:
    return Passage.objects.filter(memory__namespace=namespace, previous__isnull=False).count()


def test_with_a_broker_serve_starts_a_worker_and_beat_and_stops_them_with_it():
    import redis

    broker = f"redis://127.0.0.1:6379/{6 + os.getpid() % 10}"
    redis.Redis.from_url(broker).ping()
    process = serve(free_port(), CELERY_BROKER_URL=broker)
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            commands = [_cmdline(pid) for pid in _children(process.pid)]
            if any("celery" in c and "--beat" in c for c in commands) and any(
                "uvicorn" in c for c in commands
            ):
                break
            assert process.poll() is None, process.communicate()[0][-3000:]
            time.sleep(0.5)
        else:
            raise AssertionError(f"no worker and beat beside uvicorn: {commands}")
        children = _children(process.pid)
    finally:
        output = stop(process)
    assert process.returncode is not None
    time.sleep(1)
    left = [pid for pid in children if Path(f"/proc/{pid}").exists() and _cmdline(pid)]
    assert not left, f"still running after serve stopped: {[_cmdline(p) for p in left]}"
    assert "Jobs: a Celery worker and beat" in output


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""
