"""Start-to-ready and the first search after ready against the median, as a newcomer sees them.

    LOADTEST_TOKEN=mh_... .venv/bin/python loadtest/first_search.py [--port 8598] [--workers 2]

Starts uvicorn as `make run` does, polls /healthz until 200, then times searches over REST
(the first one, then 30 more) and stops the server."""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
QUERIES = [
    "what did we decide about the release?",
    "when did Caroline go to the support group?",
    "anything from last week about backups",
    "what happened on the blue moon",
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=8598)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    url = f"http://127.0.0.1:{args.port}"
    began = time.monotonic()
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "uvicorn"), "memoryhub.asgi:application",
         "--port", str(args.port), "--workers", str(args.workers), "--log-level", "warning"],
        cwd=ROOT, start_new_session=True,
    )  # fmt: skip
    try:
        starting = 0
        with httpx.Client(base_url=url, timeout=60) as http:
            while True:
                try:
                    status = http.get("/healthz").status_code
                except httpx.TransportError:
                    status = None
                if status == 200:
                    break
                starting += status == 503
                time.sleep(0.1)
            ready = time.monotonic() - began
            headers = {"Authorization": f"Bearer {os.environ['LOADTEST_TOKEN']}"}
            times = []
            for i in range(31):
                t = time.perf_counter()
                r = http.post("/api/v1/search/", json={"query": QUERIES[i % 4]}, headers=headers)
                r.raise_for_status()
                times.append((time.perf_counter() - t) * 1000)
        print(f"start to ready {ready:.1f} s ({starting} 'starting' answers seen)")
        print(f"first search {times[0]:.0f} ms; next 30: median {statistics.median(times[1:]):.0f}"
              f" ms, max {max(times[1:]):.0f} ms")  # fmt: skip
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
