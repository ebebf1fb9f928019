"""Realistic load for memoryhub: assistants searching, assistants remembering, a person browsing.

Run through `make loadtest` (loadtest/run.py starts a server, seeds a namespace, hands the token
in LOADTEST_TOKEN and reads the acknowledged write ids back from LOADTEST_ACKS). Assistants send
their next request as soon as the last one is answered (closed loop: N users = N requests in
flight); the person pauses between pages as people do. The users are FastHttpUser
(geventhttpclient): the load generator shares the machine's cores with the server, and this
client costs a fraction of the CPU per request that `requests` does.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit

from locust import FastHttpUser, between, constant, events, task

TOKEN = os.environ.get("LOADTEST_TOKEN", "")
ACKS = os.environ.get("LOADTEST_ACKS", "")
QUERIES_FILE = Path(
    os.environ.get("LOADTEST_QUERIES", "../shared/benchmarks/locomo-dev/queries.jsonl")
)
HEADERS = {"Authorization": f"Bearer {TOKEN}"}
QUERIES = ["what did we decide about backups?"]
if QUERIES_FILE.exists():
    QUERIES = [json.loads(line)["query"] for line in QUERIES_FILE.open()]
RUN = uuid.uuid4().hex[:8]
_counter = itertools.count()
_acknowledged: list[str] = []


def _mcp_call(client, tool: str, arguments: dict, name: str):
    body = {
        "jsonrpc": "2.0",
        "id": next(_counter),
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }
    headers = {**HEADERS, "Accept": "application/json, text/event-stream"}
    with client.post("/mcp", json=body, headers=headers, name=name, catch_response=True) as resp:
        if resp.status_code != 200:
            resp.failure(f"HTTP {resp.status_code}")
            return None
        result = resp.json().get("result") or {}
        if result.get("isError") or "result" not in resp.json():
            resp.failure(str(resp.json())[:200])
            return None
        return result


class SearchingAssistant(FastHttpUser):
    """An assistant looking things up: mostly REST, some through MCP."""

    wait_time = constant(0)
    fixed_count = int(os.environ.get("LOADTEST_SEARCHERS", "0"))

    @task(3)
    def rest_search(self):
        self.client.post(
            "/api/v1/search/",
            json={"query": random.choice(QUERIES), "limit": 10},
            headers=HEADERS,
            name="search (REST)",
        )

    @task(1)
    def mcp_search(self):
        _mcp_call(self.client, "memory_search", {"query": random.choice(QUERIES)}, "search (MCP)")


class RememberingAssistant(FastHttpUser):
    """An assistant storing what it learnt, one memory per call; every text is unique."""

    wait_time = constant(0)
    fixed_count = int(os.environ.get("LOADTEST_WRITERS", "0"))

    def _content(self) -> str:
        return (
            f"Load test {RUN}-{next(_counter)}: {random.choice(QUERIES)} "
            f"The answer recorded at step {random.randint(0, 10**9)}."
        )

    @task(3)
    def rest_remember(self):
        with self.client.post(
            "/api/v1/memories/",
            json={"content": self._content(), "category": "fact"},
            headers=HEADERS,
            name="remember (REST)",
            catch_response=True,
        ) as resp:
            if resp.status_code == 201:
                _acknowledged.append(resp.json()["memory"]["id"])
            else:
                resp.failure(f"HTTP {resp.status_code}: {resp.text[:200]}")

    @task(1)
    def mcp_remember(self):
        result = _mcp_call(self.client, "remember", {"content": self._content()}, "remember (MCP)")
        if result is not None:
            data = result.get("structuredContent") or {}
            if data.get("id"):
                _acknowledged.append(data["id"])


class BulkPostingAssistant(FastHttpUser):
    """A program moving memories in: one batch of BULK_SIZE unique memories a request, the most
    one request may carry. A batch that large is answered 202 with a job: the program polls it
    once a second and posts the next batch when it is stored. "stored" is the time from post
    to done."""

    wait_time = constant(0)
    fixed_count = int(os.environ.get("LOADTEST_BULK", "0"))
    size = int(os.environ.get("LOADTEST_BULK_SIZE", "1000"))
    network_timeout = connection_timeout = 600.0

    @task
    def post_batch(self):
        items = [
            {"content": f"Bulk {RUN}-{next(_counter)}: {random.choice(QUERIES)}"[:180]}
            for _ in range(self.size)
        ]
        started = time.perf_counter()
        with self.client.post(
            "/api/v1/memories/batch/",
            json={"items": items},
            headers=HEADERS,
            name=f"batch of {self.size} (REST)",
            catch_response=True,
        ) as resp:
            if resp.status_code == 201:
                _acknowledged.extend(r["memory"]["id"] for r in resp.json()["results"])
                return
            if resp.status_code != 202:
                resp.failure(f"HTTP {resp.status_code}: {resp.text[:200]}")
                return
            status_path = urlsplit(resp.json()["status_url"]).path
        job = self._wait_for(status_path)
        stored = job is not None and job["state"] == "done"
        if stored:
            _acknowledged.extend(r["id"] for r in job["results"] if r["created"])
        self.environment.events.request.fire(
            request_type="JOB",
            name=f"batch of {self.size} (stored)",
            response_time=(time.perf_counter() - started) * 1000,
            response_length=0,
            exception=None if stored else RuntimeError(f"job ended {job and job['state']}"),
            context={},
        )

    def _wait_for(self, path: str) -> dict | None:
        while True:
            time.sleep(1.0)
            with self.client.get(
                path, headers=HEADERS, name="batch job poll", catch_response=True
            ) as resp:
                if resp.status_code != 200:
                    resp.failure(f"HTTP {resp.status_code}: {resp.text[:200]}")
                    return None
                job = resp.json()
            if job["state"] in ("done", "failed"):
                return job


class BrowsingPerson(FastHttpUser):
    """A person paging through memories, tags and stats over REST."""

    wait_time = between(1, 3)
    fixed_count = int(os.environ.get("LOADTEST_BROWSERS", "0"))

    @task(3)
    def list_memories(self):
        offset = random.choice([0, 0, 50, 100])
        self.client.get(
            f"/api/v1/memories/?limit=50&offset={offset}", headers=HEADERS, name="list memories"
        )

    @task(1)
    def tags_and_stats(self):
        self.client.get("/api/v1/tags/", headers=HEADERS, name="tags")
        self.client.get("/api/v1/stats/", headers=HEADERS, name="stats")


@events.quitting.add_listener
def _write_acks(environment, **kwargs):
    if ACKS:
        Path(ACKS).write_text("\n".join(_acknowledged))
