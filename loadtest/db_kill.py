"""Kill the embedded PostgreSQL with SIGKILL during a write load; measure how long until the app
serves again by itself, and check that every acknowledged write is still stored.

    .venv/bin/python loadtest/db_kill.py [--writers 4] [--workers 1] [--pool 8] [--port 8400]
                                         [--before 5] [--after 10] [--json var/db_kill.json]

Starts its own server (uvicorn, `--workers` processes) on an embedded PostgreSQL in a fresh
var dir under /tmp, so the kill disturbs nothing else; `--pool 0` runs without the connection
pool. Writers POST memories in a loop; after `--before` seconds the postmaster is killed; the
writers go on until the first write acknowledged after the kill plus `--after` seconds. Prints
a timeline (per second after the kill: statuses) and the figures: seconds from the kill to the
first acknowledged write, requests that failed and how, and acknowledged writes missing
afterwards (must be 0). No person does anything in between.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _postmaster_pid(var_dir: Path) -> int:
    return int((var_dir / "pgdata" / "postmaster.pid").read_text().splitlines()[0])


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """A uvicorn server on its own embedded PostgreSQL in a fresh var dir."""

    def __init__(self, *, pool: int, workers: int, port: int | None, log: Path | None = None):
        self.var_dir = Path(tempfile.mkdtemp(prefix="mh-dbkill-"))
        self.env = {
            **os.environ,
            "MEMORYHUB_VAR_DIR": str(self.var_dir),
            "DJANGO_SETTINGS_MODULE": "memoryhub.settings.base",
            "EMBEDDED_DATABASE_NAME": "dbkill",
            "DATABASE_POOL_MAX_SIZE": str(pool),
        }
        models = ROOT / "var" / "models"
        if models.is_dir():  # reuse the exported model instead of exporting it again
            self.env.setdefault("EMBEDDING_CACHE_DIR", str(models))
        self.port = port or _free_port()
        self.workers = workers
        self.log = log or self.var_dir / "server.log"
        self.process: subprocess.Popen | None = None
        self.url = f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> Server:
        try:
            return self._start()
        except BaseException:
            self.__exit__()  # never leave a server or a postmaster behind
            raise

    def _start(self) -> Server:
        manage = [sys.executable, "manage.py"]
        subprocess.run([*manage, "migrate", "-v0"], cwd=ROOT, env=self.env, check=True, timeout=600)
        self.token = subprocess.run(
            [*manage, "create_token", "--namespace", "crash"],
            cwd=ROOT,
            env=self.env,
            check=True,
            capture_output=True,
            text=True,
            timeout=300,
        ).stdout.strip()
        command = [sys.executable, "-m", "uvicorn", "memoryhub.asgi:application"]
        command += ["--port", str(self.port), "--workers", str(self.workers)]
        with open(self.log, "w") as log:
            self.process = subprocess.Popen(
                command, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + 300
        while True:
            try:
                if httpx.get(f"{self.url}/healthz", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError(f"server did not start; see {self.log}")
            time.sleep(0.5)
        return self

    def __exit__(self, *exc) -> None:
        from memoryhub.db import stop_embedded

        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
        stop_embedded(self.var_dir / "pgdata")
        subprocess.run(["rm", "-rf", str(self.var_dir)], check=False)


def drill(server: Server, *, writers: int = 4, before: float = 5, after: float = 10) -> dict:
    """Write, kill the postmaster, write on; return the figures."""
    headers = {"Authorization": f"Bearer {server.token}"}
    acknowledged: list[str] = []
    outcomes: list[tuple[float, float, int, str]] = []  # (sent, answered, status, detail)
    stop = threading.Event()

    def writer(worker: int) -> None:
        with httpx.Client(base_url=server.url, headers=headers, timeout=60) as client:
            number = 0
            while not stop.is_set():
                number += 1
                sent = time.monotonic()
                detail = ""
                try:
                    response = client.post(
                        "/api/v1/memories/", json={"content": f"write {worker}-{number}"}
                    )
                    status = response.status_code
                    if status == 201:
                        acknowledged.append(response.json()["memory"]["id"])
                    else:
                        detail = response.text[:120]
                except httpx.HTTPError as exc:
                    status, detail = 0, type(exc).__name__
                    time.sleep(0.2)
                outcomes.append((sent, time.monotonic(), status, detail))

    threads = [threading.Thread(target=writer, args=(i,), daemon=True) for i in range(writers)]
    for thread in threads:
        thread.start()
    time.sleep(before)
    old_pid = _postmaster_pid(server.var_dir)
    os.kill(old_pid, signal.SIGKILL)
    killed = time.monotonic()
    limit = killed + 120
    recovered_at = None
    while time.monotonic() < limit:
        done = [a for s, a, st, _ in list(outcomes) if st == 201 and s > killed]
        if done:
            recovered_at = min(done)
            break
        time.sleep(0.1)
    time.sleep(after)
    stop.set()
    for thread in threads:
        thread.join(timeout=90)

    with httpx.Client(base_url=server.url, headers=headers, timeout=60) as client:
        missing = [
            i for i in acknowledged if client.get(f"/api/v1/memories/{i}/").status_code != 200
        ]
        health = client.get("/healthz").status_code
    after_kill = [(s, a, st, d) for s, a, st, d in outcomes if a > killed]
    failed = Counter(st for _, _, st, _ in after_kill if st != 201)
    timeline: dict[int, Counter] = {}
    for _, answered, status, _ in after_kill:
        timeline.setdefault(int(answered - killed), Counter())[status] += 1
    return {
        "writers": writers,
        "workers": server.workers,
        "pool": int(server.env["DATABASE_POOL_MAX_SIZE"]),
        "recovered_s": round(recovered_at - killed, 1) if recovered_at else None,
        "new_postmaster": _postmaster_pid(server.var_dir) != old_pid,
        "acknowledged": len(acknowledged),
        "missing": len(missing),
        "failed_after_kill": dict(failed),
        "longest_request_s": round(max((a - s for s, a, _, _ in after_kill), default=0), 1),
        "failure_examples": sorted({d for _, _, st, d in after_kill if st != 201})[:5],
        "timeline": {k: dict(v) for k, v in sorted(timeline.items())},
        "healthz_after": health,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--pool", type=int, default=8, help="DATABASE_POOL_MAX_SIZE (0 = off)")
    parser.add_argument("--port", type=int, default=None)
    parser.add_argument("--before", type=float, default=5)
    parser.add_argument("--after", type=float, default=10)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--log", type=Path, default=None, help="keep the server's output here")
    args = parser.parse_args()
    print(f"starting a server (pool {args.pool}, {args.workers} worker(s)) ...", flush=True)
    with Server(pool=args.pool, workers=args.workers, port=args.port, log=args.log) as server:
        print(f"writing with {args.writers} writers; SIGKILL of PostgreSQL in {args.before} s")
        figures = drill(server, writers=args.writers, before=args.before, after=args.after)
    print("seconds after kill -> statuses:")
    for second, statuses in figures["timeline"].items():
        print(f"  {second:>3}  {statuses}")
    for key, value in figures.items():
        if key != "timeline":
            print(f"{key}: {value}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    ok = figures["recovered_s"] is not None and figures["recovered_s"] < 30
    sys.exit(0 if ok and not figures["missing"] else 1)


if __name__ == "__main__":
    main()
