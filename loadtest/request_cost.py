"""What one request costs the web process: CPU time, SQL statements and Python function calls.

    .venv/bin/python loadtest/request_cost.py [search|write] [--requests 100] [--calls]

Runs REST requests through Django's whole stack (middleware, DRF, token authentication, the
connection pool, the real model and database) inside this process, in namespace `loadtest`
(seeded as `make loadtest` does), and prints the CPU time per request of this process and of
the PostgreSQL backend serving it (read from /proc, so a local database only). CPU time and
call counts hardly depend on what else runs on the machine, unlike throughput and latency, so
this is the figure to compare two versions by (run it from each checkout, alternately).
`--calls` also counts Python function calls per request (cProfile, deterministic).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=["search", "write"], nargs="?", default="search")
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--calls", action="store_true", help="count Python calls (cProfile)")
    parser.add_argument("--profile", type=Path, help="with --calls: write the cProfile stats here")
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings.base")
    sys.path[:0] = [str(ROOT), str(ROOT / "loadtest")]
    import django

    django.setup()
    import run as loadtest  # loadtest/run.py: the same namespace and token
    from django.conf import settings
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from memoryhub.warmup import warm

    settings.ALLOWED_HOSTS = ["*"]
    settings.API_RATE_LIMIT = "1000000/minute"
    headers = {"HTTP_AUTHORIZATION": f"Bearer {loadtest.seed()}"}
    warm()
    lines = (loadtest.SEED_SOURCE / "queries.jsonl").read_text().splitlines()
    queries = [json.loads(line)["query"] for line in lines]
    client = Client()

    def one(i: int) -> None:
        if args.kind == "search":
            body = {"query": queries[i % len(queries)], "limit": 10}
            response = client.post(
                "/api/v1/search/", body, content_type="application/json", **headers
            )
            expected = 200
        else:
            body = {"content": f"Request cost {time.time()} {i}: {queries[i % len(queries)]}"}
            response = client.post(
                "/api/v1/memories/", body, content_type="application/json", **headers
            )
            expected = 201
        if response.status_code != expected:
            raise SystemExit(f"HTTP {response.status_code}: {response.content[:300]!r}")

    for i in range(5):
        one(i)
    with CaptureQueriesContext(connection) as captured:
        one(5)
    statements = len(captured.captured_queries)  # read now: the pool resets the log later
    profiler = None
    if args.calls:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    backend = _backend_pid(connection)
    wall, cpu = time.perf_counter(), time.process_time()
    db_cpu = _cpu_seconds(backend)
    for i in range(args.requests):
        one(i + 10)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    db_cpu = _cpu_seconds(backend) - db_cpu
    n = args.requests
    print(f"{args.kind}: {n} requests, {statements} SQL statements each")
    print(f"web-process CPU {1000 * cpu / n:.1f} ms per request (wall {1000 * wall / n:.1f} ms)")
    if backend is not None and _backend_pid(connection) == backend:
        print(f"PostgreSQL backend CPU {1000 * db_cpu / n:.1f} ms per request")
    if args.kind == "write":
        _remove_written(loadtest.NAMESPACE)
    if profiler is not None:
        import pstats

        profiler.disable()
        stats = pstats.Stats(profiler)
        calls = stats.total_calls
        if args.profile:
            stats.dump_stats(args.profile)
        print(
            f"Python function calls per request: {calls / n:.0f} (the CPU above includes cProfile)"
        )


def _remove_written(namespace: str) -> None:
    """The memories this run wrote go again, so the next run (and the load test) measures the
    seeded namespace."""
    from django.db import connection

    from apps.memories.models import Memory

    Memory.every_state.filter(
        namespace__name=namespace, content__startswith="Request cost "
    ).delete()
    with connection.cursor() as cursor:
        cursor.execute(f"VACUUM ANALYZE {Memory._meta.db_table}")


def _backend_pid(connection) -> int | None:
    """The pid of the PostgreSQL backend behind this process's connection (the pool hands the
    same one back while a single thread asks)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(cursor.fetchone()[0])


def _cpu_seconds(pid: int | None) -> float:
    """User plus system CPU seconds of a local process, from /proc (0 when it is not local)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, TypeError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


if __name__ == "__main__":
    main()
