"""`make loadtest`: start a local server, seed a namespace, run locust headless, print a table.

    .venv/bin/python loadtest/run.py [--scenarios search write mixed] [--seconds 30]
                                     [--workers 2] [--port 8599]

Scenarios: search = 20 searching assistants; write = 50 remembering
assistants (every acknowledged write is then checked to be stored exactly once); mixed = 20
searchers + 20 writers + 2 people browsing; bulk (only when named) = one searching assistant
beside four programs posting 1,000-memory batches. Bounded: users and seconds are fixed per run,
and the server this script started is stopped at the end. Figures depend on the machine and on what
else runs on it: docs/benchmarks.md records both next to each result.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import shlex
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
SCENARIOS = {
    "search": {"LOADTEST_SEARCHERS": 20},
    "write": {"LOADTEST_WRITERS": 50},
    "mixed": {"LOADTEST_SEARCHERS": 20, "LOADTEST_WRITERS": 20, "LOADTEST_BROWSERS": 2},
    "bulk": {"LOADTEST_SEARCHERS": 1, "LOADTEST_BULK": 4},
}
CLASSES = {
    "LOADTEST_SEARCHERS": "SearchingAssistant",
    "LOADTEST_WRITERS": "RememberingAssistant",
    "LOADTEST_BROWSERS": "BrowsingPerson",
    "LOADTEST_BULK": "BulkPostingAssistant",
}
SEED_SOURCE = ROOT.parent / "shared/benchmarks/locomo-dev"
NAMESPACE = "loadtest"
SERVER_PID: int | None = None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--scenarios", nargs="+", choices=SCENARIOS, default=["search", "write", "mixed"]
    )
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--workers", type=int, default=int(os.environ.get("WEB_CONCURRENCY", 2)))
    parser.add_argument("--port", type=int, default=8599)
    parser.add_argument(
        "--nginx",
        action="store_true",
        help="the production shape: nginx on --port in front of --workers single-worker "
        "uvicorn processes (every request balanced on its own; ops/nginx.conf.template)",
    )
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings.base")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    token = seed()
    out = ROOT / "var/loadtest"
    out.mkdir(parents=True, exist_ok=True)
    url = f"http://127.0.0.1:{args.port}"
    server, ready_s = start_server(args.port, args.workers, nginx=args.nginx)
    global SERVER_PID
    SERVER_PID = server.pid
    rows = []
    try:
        shape = "behind nginx" if args.nginx else "uvicorn --workers"
        print(f"server ready in {ready_s:.1f} s ({args.workers} workers, {shape})", flush=True)
        time.sleep(2)
        print(f"resident MB idle (pid: now, peak): {memory_mb(server.pid)}")
        for name in args.scenarios:
            rows += run_scenario(name, url, token, args.seconds, out)
            print(f"resident MB after {name} (pid: now, peak): {memory_mb(server.pid)}")
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    load = os.getloadavg()
    print(f"\nload average after the run: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(format_table(rows))


def seed() -> str:
    """The namespace with the LoCoMo dev memories (once) and a fresh read-write token."""
    from apps.access.services import token_create
    from apps.memories.models import Memory
    from apps.memories.services import memory_batch_create, namespace_get_or_create
    from apps.transfer.transfer import read_jsonl

    namespace = namespace_get_or_create(name=NAMESPACE)
    _drop_earlier_writes(namespace)
    if not Memory.objects.filter(namespace=namespace).exists():
        items = [{"content": r["content"]} for r in read_jsonl(SEED_SOURCE / "memories.jsonl")]
        for start in range(0, len(items), 500):
            memory_batch_create(namespace=namespace, items=items[start : start + 500])
    return token_create(name="loadtest", namespaces=[namespace])[1]


def _drop_earlier_writes(namespace) -> None:
    """Every run starts from the seeded namespace: the memories earlier write scenarios added
    are removed (and the table vacuumed), otherwise each run would search a larger namespace
    than the last and the figures of two runs could not be compared."""
    from django.db import connection

    from apps.memories.models import Memory

    # every_state: writes held for review are stored too (Memory.objects leaves them out)
    earlier = Memory.every_state.filter(namespace=namespace, content__startswith="Load test ")
    if earlier.exists():
        removed, _ = earlier.delete()
        print(f"removed {removed} rows left by earlier write scenarios", flush=True)
        with connection.cursor() as cursor:
            cursor.execute(f"VACUUM ANALYZE {Memory._meta.db_table}")


def start_server(port: int, workers: int, nginx: bool = False) -> tuple[subprocess.Popen, float]:
    began = time.monotonic()
    # Every simulated assistant shares one token: the per-token request limit (a guard against
    # one runaway client) would otherwise be what the run measures.
    env = {**os.environ, "API_RATE_LIMIT": os.environ.get("LOADTEST_RATE_LIMIT", "1000000/minute")}
    # The web command of `make run` (apps/core/management/commands/serve.py), quieter.
    uvicorn = [str(BIN / "uvicorn"), "memoryhub.asgi:application", "--log-level", "warning",
               "--no-access-log", "--no-proxy-headers",
               "--http", "memoryhub.http:HeaderDeadlineHttpTools"]  # fmt: skip
    if nginx:
        server = subprocess.Popen(
            ["bash", "-c", _nginx_shape(port, workers, uvicorn)],
            cwd=ROOT, start_new_session=True, env=env,
        )  # fmt: skip
    else:
        server = subprocess.Popen(
            [*uvicorn, "--port", str(port), "--workers", str(workers)],
            cwd=ROOT, start_new_session=True, env=env,
        )  # fmt: skip
    # Behind nginx, every web process must be ready, not just the one nginx asks.
    waiting = [port, *(range(port + 1, port + 1 + workers) if nginx else [])]
    while time.monotonic() - began < 120:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{waiting[0]}/healthz", timeout=5) as r:
                if r.status == 200:
                    waiting.pop(0)
                    if not waiting:
                        return server, time.monotonic() - began
                    continue
        except OSError:
            pass
        if server.poll() is not None:
            raise SystemExit("the server exited before it was ready")
        time.sleep(0.2)
    os.killpg(server.pid, signal.SIGTERM)
    raise SystemExit("the server was not ready within 120 s")


def _nginx_shape(port: int, workers: int, uvicorn: list[str]) -> str:
    """A shell line that runs nginx on `port` and `workers` uvicorn processes (one worker each)
    on the ports after it, all in one process group, so killing the group stops the shape."""
    from ops.shape import nginx_conf  # ROOT is on sys.path (main)

    prefix = ROOT / "var/loadtest/nginx"
    prefix.mkdir(parents=True, exist_ok=True)
    upstreams = [f"127.0.0.1:{port + 1 + i}" for i in range(workers)]
    conf = prefix / "nginx.conf"
    conf.write_text(
        nginx_conf(listen=f"127.0.0.1:{port}", upstreams=upstreams, pid=str(prefix / "nginx.pid"),
                   prefix=str(prefix))
    )  # fmt: skip
    web = [shlex.join([*uvicorn, "--port", u.rsplit(":", 1)[1]]) + " &" for u in upstreams]
    nginx = f"nginx -e {prefix}/error.log -c {conf} -g 'daemon off;' &"
    return " ".join([*web, nginx, "wait"])


def cpu_seconds(root_pids: list[int]) -> float:
    """CPU time (user + system) used so far by these processes and all their descendants
    (the server's workers, the PostgreSQL backends), including children already reaped."""
    tick = os.sysconf("SC_CLK_TCK")
    stats = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            stats[int(entry.name)] = (int(fields[1]), sum(int(x) for x in fields[11:15]))
    total, todo = 0, list(root_pids)
    while todo:
        pid = todo.pop()
        if pid in stats:
            total += stats[pid][1]
            todo += [child for child, (parent, _) in stats.items() if parent == pid]
    return total / tick


def memory_mb(root_pid: int) -> dict[int, tuple[int, int]]:
    """pid -> (resident MB now, peak resident MB) for a process and its children."""
    out = {}
    for pid in [root_pid, *_children(root_pid)]:
        try:
            status = (Path("/proc") / str(pid) / "status").read_text()
        except OSError:
            continue
        values = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        rss, peak = (int(values[k].split()[0]) // 1024 for k in ("VmRSS", "VmHWM"))
        out[pid] = (rss, peak)
    return out


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(x) for x in path.read_text().split()] if path.exists() else []


def postmaster_pid() -> int | None:
    from django.conf import settings  # set up by main()

    # The embedded server of this run's data directory (MEMORYHUB_VAR_DIR), not always var/.
    pidfile = Path(settings.VAR_DIR) / "pgdata/postmaster.pid"
    return int(pidfile.read_text().split()[0]) if pidfile.exists() else None


def run_scenario(name: str, url: str, token: str, seconds: int, out: Path) -> list[dict]:
    counts = SCENARIOS[name]
    watched = [pid for pid in (SERVER_PID, postmaster_pid()) if pid]
    cpu_before, wall_before = cpu_seconds(watched), time.monotonic()
    locust_before = _children_cpu()
    users = sum(counts.values())
    acks = out / f"{name}-acks.txt"
    acks.unlink(missing_ok=True)
    env = {**os.environ, "LOADTEST_TOKEN": token, "LOADTEST_ACKS": str(acks),
           "LOADTEST_QUERIES": str(SEED_SOURCE / "queries.jsonl"),
           **{k: str(v) for k, v in counts.items()}}  # fmt: skip
    classes = [CLASSES[k] for k in counts]
    print(f"\n== {name}: {users} users for {seconds} s ==", flush=True)
    subprocess.run(
        [str(BIN / "locust"), "-f", str(ROOT / "loadtest/locustfile.py"), "--headless",
         "-u", str(users), "-r", str(users), "-t", f"{seconds}s", "--host", url,
         "--only-summary", "--csv", str(out / name), "--stop-timeout", "10", *classes],
        env=env, check=False,
    )  # fmt: skip
    cpu = cpu_seconds(watched) - cpu_before
    locust_cpu = _children_cpu() - locust_before
    rows = []
    with open(out / f"{name}_stats.csv") as handle:
        for r in csv.DictReader(handle):
            if r["Name"] == "Aggregated" and len(counts) == 1:
                continue
            rows.append({
                "scenario": name, "request": r["Name"], "count": int(r["Request Count"]),
                "failures": int(r["Failure Count"]), "per_s": float(r["Requests/s"]),
                "p50": r["50%"], "p95": r["95%"], "p99": r["99%"],
            })  # fmt: skip
    total = sum(r["count"] for r in rows if r["request"] != "Aggregated")
    wall = time.monotonic() - wall_before
    print(f"{name}: server + PostgreSQL used {cpu:.1f} CPU-s in {wall:.0f} s for {total} requests"
          f" = {1000 * cpu / max(total, 1):.0f} CPU-ms per request; locust"
          f" {1000 * locust_cpu / max(total, 1):.0f} CPU-ms per request")  # fmt: skip
    if acks.exists() and ("LOADTEST_WRITERS" in counts or "LOADTEST_BULK" in counts):
        rows.append({"scenario": name, "request": "exactly-once", **check_writes(acks)})
    return rows


def _children_cpu() -> float:
    """CPU seconds used by this script's finished child processes (the locust runs)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def check_writes(acks: Path) -> dict:
    """Every acknowledged id is stored exactly once, and no text is stored twice."""
    from django.db.models import Count

    from apps.memories.models import Memory

    ids = [line for line in acks.read_text().split() if line]
    # A write held for review is stored all the same: every state counts (Memory.objects
    # leaves pending memories out, and counted them as lost).
    stored = Memory.every_state.filter(id__in=ids)
    found = stored.count()
    repeated = (
        Memory.every_state.filter(namespace__name=NAMESPACE, content__startswith="Load test ")
        .values("content_hash")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
        .count()
    )
    ok = found == len(set(ids)) == len(ids) and repeated == 0
    return {"acknowledged": len(ids), "stored": found, "duplicated_texts": repeated, "ok": ok}


def format_table(rows: list[dict]) -> str:
    lines = [
        "| scenario | request | requests | failures | per s | p50 ms | p95 ms | p99 ms |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        if r["request"] == "exactly-once":
            lines.append(f"| {r['scenario']} | exactly-once check | {json.dumps(r)} |||||")
            continue
        lines.append(
            f"| {r['scenario']} | {r['request']} | {r['count']} | {r['failures']} "
            f"| {r['per_s']:.1f} | {r['p50']} | {r['p95']} | {r['p99']} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
