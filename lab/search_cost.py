"""CPU per search of two checkouts, side by side, query by query, on a loaded locomo-dev copy.

    python lab/search_cost.py OLD_CHECKOUT NEW_CHECKOUT --reuse eval-xxxxxxxx- [--rounds 2]

Starts one worker process per checkout (each imports its own code, both read the same
database), then hands them the questions in turn, A then B, question by question, so a drift in
the machine's speed falls on both alike. Each worker times its search() call in CPU: its own
process (the encoder's and the log writer's threads included) and the PostgreSQL backend that
served it (its run time from /proc/PID/schedstat, in nanoseconds: a local database only), and
counts the SQL statements. Prints p50/p95 of each, and of the two together (what the machine
spent on the search), their ratios, and the top-10 overlap of the two rankings (same database,
so the same ids). The backend is the searching connection's: a statement another thread sends
on its own connection (the old beside-reads) is not in it.
The search runs as `evaluate` calls it (limit 20, as of the newest memory).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve()
DATA = HERE.parents[2] / "shared/benchmarks/locomo-dev"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkouts", nargs="*", type=Path)
    parser.add_argument("--reuse", required=True, help="the prefix `evaluate --keep` printed")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--limit", type=int, default=0, help="first N questions only")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        _serve(args)
    else:
        _compare(args)


def _compare(args) -> None:
    workers = [_start(path, args) for path in args.checkouts]
    count = min(int(worker.stdout.readline()) for worker in workers)
    if args.limit:
        count = min(count, args.limit)
    results: list[list[dict]] = [[] for _ in workers]
    for _ in range(args.rounds):
        for i in range(count):
            for worker, out in zip(workers, results, strict=True):
                worker.stdin.write(f"{i}\n")
                worker.stdin.flush()
                out.append(json.loads(worker.stdout.readline()))
    for worker in workers:
        worker.stdin.close()
        worker.wait()
    names = [str(p) for p in args.checkouts]
    for name, out in zip(names, results, strict=True):
        print(f"{name}: {_figures(out)}")
    if len(results) == 2:
        print("ratio new/old: " + _ratios(results[0], results[1]))
        print(f"top-10 overlap: {_overlap(results[0][:count], results[1][:count]):.4f}")


def _start(checkout: Path, args) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(checkout.resolve())}
    command = [
        str(checkout / ".venv/bin/python"),
        str(HERE),
        "--worker",
        "--reuse",
        args.reuse,
        "--data",
        str(args.data),
    ]
    return subprocess.Popen(
        command, cwd=checkout, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def _figures(out: list[dict]) -> str:
    parts = []
    for key in KEYS:
        values = [_value(r, key) for r in out]
        parts.append(
            f"{key} p50 {_percentile(values, 0.5):.1f} p95 {_percentile(values, 0.95):.1f}"
        )
    sql = [r["sql"] for r in out]
    parts.append(f"sql mean {sum(sql) / len(sql):.2f} max {max(sql)}")
    return "; ".join(parts)


def _ratios(old: list[dict], new: list[dict]) -> str:
    parts = []
    for key in KEYS:
        for share in (0.5, 0.95):
            a = _percentile([_value(r, key) for r in old], share)
            b = _percentile([_value(r, key) for r in new], share)
            parts.append(f"{key} p{int(share * 100)} {b / a:.3f}" if a else f"{key} -")
    return "; ".join(parts)


# process CPU, the PostgreSQL backend's, both together (the machine's), wall time
KEYS = ("cpu_ms", "db_ms", "total_ms", "wall_ms")


def _value(row: dict, key: str) -> float:
    return row["cpu_ms"] + row["db_ms"] if key == "total_ms" else row[key]


def _overlap(old: list[dict], new: list[dict]) -> float:
    shares = [
        len(set(a["top"]) & set(b["top"])) / max(1, len(a["top"]))
        for a, b in zip(old, new, strict=True)
    ]
    return sum(shares) / len(shares)


def _serve(args) -> None:
    """The worker: one search per question index read from stdin, one JSON line back."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings.base")
    import django

    django.setup()
    from django.db import connections
    from django.db.models import Max
    from django.test.utils import CaptureQueriesContext

    from apps.memories.models import Memory, Namespace
    from apps.search.services import search
    from lab.evaluation import read_queries
    from memoryhub.replica.routing import read_alias
    from memoryhub.warmup import warm

    queries = read_queries(args.data, args.reuse)
    names = {q["namespace"] for q in queries}
    namespaces = {n.name: n for n in Namespace.objects.filter(name__in=names)}
    as_of = dict(
        Memory.objects.filter(namespace__in=namespaces.values())
        .values_list("namespace__name")
        .annotate(newest=Max("created_at"))
    )
    warm(http=False)

    def one(q: dict) -> list[str]:
        response = search(
            namespace=namespaces[q["namespace"]],
            query=q["query"],
            limit=20,
            now=as_of[q["namespace"]],
        )
        return [m["id"] for m in response.memories[:10]]

    for q in queries[:5]:
        one(q)
    connection = connections[read_alias()]
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = int(cursor.fetchone()[0])
    print(len(queries), flush=True)
    for line in sys.stdin:
        q = queries[int(line)]
        db = _cpu_seconds(backend)
        connection.queries_log.clear()  # its 9,000-entry cap would stop the count
        wall, cpu = time.perf_counter(), time.process_time()
        with CaptureQueriesContext(connection) as captured:
            top = one(q)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        db = _cpu_seconds(backend) - db
        row = {
            "cpu_ms": 1000 * cpu,
            "db_ms": 1000 * db,
            "wall_ms": 1000 * wall,
            "sql": len(captured.captured_queries),
            "top": top,
        }
        print(json.dumps(row), flush=True)


def _cpu_seconds(pid: int) -> float:
    """The process's time on a CPU so far: schedstat's nanoseconds (stat's utime and stime
    count 10 ms ticks, too coarse for one search)."""
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e9


if __name__ == "__main__":
    main()
