"""Abuse against a live server: guessed tokens, a forged X-Forwarded-For, one token's rate over
several web processes, and hostile import files through the browser's import. Prints what
each answered, how long it took and the web processes' memory before and after.

    API_RATE_LIMIT=300/minute .venv/bin/uvicorn memoryhub.asgi:application --port 8105 \\
        --workers 2 --no-proxy-headers &
    .venv/bin/python ops/abuse_probe.py --url http://127.0.0.1:8105 --server-pid PID

`--server-pid` is the uvicorn parent; its children (the web processes) are measured. Sets
itself up through the ORM like ops/race_probe.py (namespace "abuse-probe", a token, a user).
"""

from __future__ import annotations

import argparse
import io
import json
import random
import re
import sqlite3
import sys
import tempfile
import time
import zipfile
from collections import Counter
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from race_probe import PASSWORD, setup  # noqa: E402

NAMESPACE = "race-probe"  # setup() makes this namespace, its token and its UI user
WORDS = [
    "deploy",
    "cache",
    "token",
    "queue",
    "backup",
    "index",
    "search",
    "memory",
    "vector",
    "note",
    "rule",
    "fix",
]


def rss_mb(server_pid: int) -> dict[int, float]:
    """Resident memory of each child of the server process, in MB."""
    out = {}
    children = Path(f"/proc/{server_pid}/task/{server_pid}/children").read_text().split()
    for pid in map(int, children):
        status = Path(f"/proc/{pid}/status").read_text()
        out[pid] = int(re.search(r"VmRSS:\s+(\d+)", status).group(1)) / 1024
    return out


# --- limits ---------------------------------------------------------------------------------


def guessed_tokens(base: str, token: str, count: int) -> None:
    url = f"{base}/api/v1/namespaces/"
    statuses = Counter(
        httpx.get(url, headers={"Authorization": f"Bearer mh_made_up_{i}"}).status_code
        for i in range(count)
    )
    valid = httpx.get(url, headers={"Authorization": f"Bearer {token}"}).status_code
    mcp = httpx.post(
        f"{base}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
        headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
    ).status_code
    print(
        f"{count} made-up tokens: {dict(statuses)}; then the valid token: REST {valid}, MCP {mcp}"
    )


def forged_forwarded_for(base: str) -> None:
    url = f"{base}/api/v1/namespaces/"
    statuses = Counter(
        httpx.get(
            url,
            headers={"Authorization": "Bearer mh_wrong", "X-Forwarded-For": f"203.0.113.{i % 250}"},
        ).status_code
        for i in range(100)
    )
    print(f"100 wrong tokens, each with another forged X-Forwarded-For: {dict(statuses)}")


def token_rate(base: str, token: str, count: int) -> None:
    """New connection per request, so both web processes answer; all count against one rate."""
    url = f"{base}/api/v1/namespaces/"
    started = time.monotonic()
    statuses = Counter(
        httpx.get(url, headers={"Authorization": f"Bearer {token}"}).status_code
        for _ in range(count)
    )
    took = time.monotonic() - started
    print(f"{count} requests of one token in {took:.0f} s over all processes: {dict(statuses)}")


# --- hostile uploads ------------------------------------------------------------------------


def _zip(members: dict[str, str | bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in members.items():
            archive.writestr(name, text)
    return buffer.getvalue()


def _sqlite(statements: list[str]) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "f.db"
        db = sqlite3.connect(path)
        for statement in statements:
            db.execute(statement)
        db.commit()
        db.close()
        return path.read_bytes()


def _prose(size: int) -> str:
    rng = random.Random(7)
    parts, total, section = [], 0, 0
    while total < size:
        if section % 40 == 0:
            parts.append(f"\n## Section {section // 40}\n\n")
        line = " ".join(rng.choice(WORDS) + str(rng.randint(0, 999)) for _ in range(14)) + ".\n"
        parts.append(line)
        total += len(line)
        section += 1
    return "".join(parts)


def hostile_files() -> dict[str, tuple[str, bytes]]:
    """name -> (upload file name, bytes)."""
    damaged = bytearray(_zip({"a.md": "# A\n\n" + _prose(20_000), "b.md": "# B\n\nfine"}))
    damaged[200:260] = b"\xff" * 60
    return {
        "sqlite view, recursive": (
            "slow.db",
            _sqlite(
                [
                    "CREATE VIEW memories AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL "
                    "SELECT i + 1 FROM n) SELECT 'x' AS content, i AS content_hash FROM n"
                ]
            ),
        ),
        "zip bomb 40 MB": ("bomb.zip", _zip({"big.md": "same line again\n" * 2_600_000})),
        "markdown 8 MB": ("big-notes.zip", _zip({"big.md": "# Big\n" + _prose(8_000_000)})),
        "damaged zip": ("damaged.zip", bytes(damaged)),
        "integer sqlite columns": (
            "typed.db",
            _sqlite(
                [
                    "CREATE TABLE memories (id INTEGER, content TEXT, content_hash INTEGER, "
                    "tags INTEGER, memory_type INTEGER, metadata INTEGER, created_at REAL)",
                    "INSERT INTO memories VALUES (1, 'typed columns', 5, 7, 3, 9, 1.0)",
                ]
            ),
        ),
        "mem0 nested 100k deep": ("deep.json", ("[" * 100_000 + "]" * 100_000).encode()),
        "jsonl with BOM": (
            "bom.jsonl",
            b"\xef\xbb\xbf" + json.dumps({"content": f"BOM line {time.time()}"}).encode(),
        ),
    }


class Browser:
    CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')

    def __init__(self, base: str):
        self.base = base
        self.http = httpx.Client(base_url=base, timeout=120, headers={"Referer": base + "/"})
        page = self.http.get("/login/")
        csrf = self.CSRF.search(page.text).group(1)
        data = {"csrfmiddlewaretoken": csrf, "username": "race-probe", "password": PASSWORD}
        self.http.post("/login/", data=data)

    def upload(self, name: str, body: bytes, cancel_after: float = 0) -> tuple[int, str, float]:
        """(status, the run's final page text, seconds until it ended); with `cancel_after`,
        the import is cancelled once it has run that long."""
        page = self.http.get(f"/ns/{NAMESPACE}/transfer/")
        started = time.monotonic()
        answer = self.http.post(
            f"/ns/{NAMESPACE}/transfer/import/",
            data={"csrfmiddlewaretoken": self.CSRF.search(page.text).group(1), "format": "auto"},
            files={"file": (name, body)},
            headers={"HX-Request": "true"},
        )
        text = answer.text
        self.answered = time.monotonic() - started
        cancelled = False
        run = re.search(r"/transfer/import/([0-9a-f-]{36})/", text)
        while run and _phase(text) not in ("done", "failed", "cancelled"):
            if time.monotonic() - started > 600:
                break
            if cancel_after and not cancelled and time.monotonic() - started > cancel_after:
                csrf = self.http.cookies["csrftoken"]
                self.http.post(
                    f"/ns/{NAMESPACE}/transfer/import/{run.group(1)}/cancel/",
                    data={"csrfmiddlewaretoken": csrf},
                )
                cancelled, self.cancelled_at = True, time.monotonic() - started
            time.sleep(0.5)
            progress = self.http.get(
                f"/ns/{NAMESPACE}/transfer/import/{run.group(1)}/", headers={"HX-Request": "true"}
            )
            if progress.status_code == 200:
                text = progress.text
        return answer.status_code, text, time.monotonic() - started


def _phase(text: str) -> str:
    found = re.search(r'data-phase="(\w+)"', text)
    return found.group(1) if found else ""


def uploads(base: str, server_pid: int | None) -> None:
    browser = Browser(base)
    for label, (name, body) in hostile_files().items():
        before = rss_mb(server_pid) if server_pid else {}
        browser.cancelled_at = None
        # The large file is a real import: it runs as a job, batch by batch; the probe lets it
        # run a while, then cancels it.
        cancel_after = 20 if label.startswith("markdown") else 0
        status, text, took = browser.upload(name, body, cancel_after=cancel_after)
        after = rss_mb(server_pid) if server_pid else {}
        result = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", text)).strip()
        grown = max((after.get(p, 0) - before.get(p, 0) for p in before), default=0)
        print(
            f"{label:24} {len(body):>9} B  HTTP {status} in {browser.answered:4.1f} s, run ended "
            f"after {took:6.1f} s"
            + (f" (cancel asked at {browser.cancelled_at:.1f} s)" if browser.cancelled_at else "")
            + f"  rss +{grown:5.0f} MB"
        )
        print(f"    {result[:300]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--server-pid", type=int)
    parser.add_argument("--parts", default="limits,uploads")
    parser.add_argument("--rate-requests", type=int, default=400)
    args = parser.parse_args()
    token = setup()
    if "limits" in args.parts:
        guessed_tokens(args.url, token, 500)
        forged_forwarded_for(args.url)
        token_rate(args.url, token, args.rate_requests)
    if "uploads" in args.parts:
        uploads(args.url, args.server_pid)
    return 0


if __name__ == "__main__":
    sys.exit(main())
