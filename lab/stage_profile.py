"""The cost of one search by stage (`evaluate --profile`, `bench --profile`): CPU milliseconds
on the searching thread and SQL statements per stage, averaged over the questions, next to the
whole call's CPU (the process's, so the encoder's thread counts) at p50 and p95, and the CPU of
each of the process's threads per search (the searching thread, the query encoder's, the
reads that run beside the search's own, the query log's writer)."""

from __future__ import annotations

import os
import re
import threading
import time
from collections import defaultdict
from collections.abc import Callable

import numpy as np
from django.db.models import Max

from apps.memories.models import Memory, Namespace
from apps.search import timing
from apps.search.config import SearchSettings
from apps.vectors import embeddings
from memoryhub.replica.routing import read_connection


def profile(
    queries: list[dict],
    search_fn: Callable[..., object],
    *,
    mode: str,
    config: SearchSettings | None = None,
    limit: int = 20,
) -> dict:
    """Each query searched once as `evaluate` searches it, under a stage probe."""
    namespaces = {
        n.name: n for n in Namespace.objects.filter(name__in={q["namespace"] for q in queries})
    }
    as_of = dict(
        Memory.objects.filter(namespace__in=namespaces.values())
        .values_list("namespace__name")
        .annotate(newest=Max("created_at"))
    )
    for q in queries[:5]:  # first-search costs (statistics, caches) stay out of the figures
        search_fn(namespace=namespaces[q["namespace"]], query=q["query"], log=False, config=config)
    process_ms, thread_ms, statements = [], [], []
    embeddings.forget_query_vectors()  # each question is embedded, as a new one would be
    before = _cpu_by_thread()
    with timing.probe(read_connection) as probe:
        for q in queries:
            sent, cpu, own = probe.sent, time.process_time(), time.thread_time()
            search_fn(
                namespace=namespaces[q["namespace"]],
                query=q["query"],
                mode=mode,
                limit=limit,
                now=as_of[q["namespace"]],
                config=config,
            )
            process_ms.append((time.process_time() - cpu) * 1000)
            thread_ms.append((time.thread_time() - own) * 1000)
            statements.append(probe.sent - sent)
    n = len(queries)
    after = _cpu_by_thread()
    threads = {name: round((ms - before.get(name, 0.0)) / n, 2) for name, ms in after.items()}
    # The searching thread's own clock, not /proc's 10 ms ticks: a few quick searches can use
    # less than one tick in all.
    threads["searching thread"] = round(float(np.mean(thread_ms)), 2)
    stages = {
        name: {
            "cpu_ms": round(ms / n, 2),
            "wall_ms": round(probe.wall_ms[name] / n, 2),
            "sql": round(probe.statements[name] / n, 2),
        }
        for name, ms in sorted(probe.cpu_ms.items(), key=lambda kv: -kv[1])
    }
    staged_cpu = sum(probe.cpu_ms.values()) / n
    staged_sql = sum(probe.statements.values()) / n
    stages["(outside the stages)"] = {
        "cpu_ms": round(float(np.mean(thread_ms)) - staged_cpu, 2),
        "wall_ms": 0.0,
        "sql": round(float(np.mean(statements)) - staged_sql, 2),
    }
    return {
        "searches": n,
        "process_cpu_ms": _spread(process_ms),
        "thread_cpu_ms": _spread(thread_ms),
        "sql_per_search": round(float(np.mean(statements)), 2),
        "stages": stages,
        "threads": dict(sorted(threads.items(), key=lambda kv: -kv[1])),
    }


def _cpu_by_thread() -> dict[str, float]:
    """CPU milliseconds each of the process's threads has used, by Python thread name (the
    threads of the same name summed; a thread Python did not start goes by its OS name), read
    from /proc (Linux; empty elsewhere). Clock ticks are 10 ms: meaningful as a total over many
    searches, not for one."""
    names = {t.native_id: t.name for t in threading.enumerate()}
    tick_ms = 1000 / os.sysconf("SC_CLK_TCK")
    used: defaultdict[str, float] = defaultdict(float)
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return used
    for tid in tids:
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                stat = f.read()
            with open(f"/proc/self/task/{tid}/comm") as f:
                comm = f.read().strip()
        except OSError:  # the thread ended meanwhile
            continue
        fields = stat.rsplit(")", 1)[1].split()
        name = names.get(int(tid), comm)
        if int(tid) == threading.main_thread().native_id:
            name = "searching thread"
        used[re.sub(r"_\d+$", "", name)] += (int(fields[11]) + int(fields[12])) * tick_ms
    return used


def _spread(values: list[float]) -> dict[str, float]:
    return {
        "p50": round(float(np.percentile(values, 50)), 2),
        "p95": round(float(np.percentile(values, 95)), 2),
        "mean": round(float(np.mean(values)), 2),
    }


def format_profile(result: dict) -> str:
    p, t = result["process_cpu_ms"], result["thread_cpu_ms"]
    lines = [
        f"{result['searches']} searches; CPU per search (process) p50 {p['p50']} / p95 {p['p95']}"
        f" ms, on the searching thread p50 {t['p50']} / p95 {t['p95']} ms; "
        f"SQL statements {result['sql_per_search']} per search",
        "",
        "| stage | CPU ms (searching thread) | wall ms | SQL statements |",
        "|---|---:|---:|---:|",
    ]
    for name, figures in result["stages"].items():
        cpu, wall, sql = figures["cpu_ms"], figures["wall_ms"], figures["sql"]
        lines.append(f"| {name} | {cpu:.2f} | {wall:.2f} | {sql:.2f} |")
    lines += ["", "| thread | CPU ms per search |", "|---|---:|"]
    threads = result.get("threads", {}).items()
    lines += [f"| {name} | {ms:.2f} |" for name, ms in threads if ms > 0]  # idle pools left out
    return "\n".join(lines)
