"""python manage.py bench [--sizes 1000 10000 100000] [--queries 100] [--json FILE]

Grows one fresh namespace to each size (ingest through memory_batch_create, the write path
imports use), then times search() at that size. Text comes from a dataset in the neutral
format (default: the LoCoMo dev set), cycled with a numbered suffix past its end."""

from __future__ import annotations

import json
import secrets
import time
from pathlib import Path

import numpy as np
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from apps.memories.models import Namespace
from apps.memories.services import memory_batch_create, namespace_get_or_create
from apps.memories.transfer import read_jsonl
from apps.search import querylog
from apps.search.services import search

DEFAULT_SOURCE = Path(__file__).resolve().parents[4].parent / "shared/benchmarks/locomo-dev"
BATCH = 500


class Command(BaseCommand):
    help = "Ingest rate and search latency (p50/p95/p99) at growing namespace sizes."

    def add_arguments(self, parser):
        parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
        parser.add_argument("--queries", type=int, default=100)
        parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
        parser.add_argument("--json", dest="json_path", type=Path)
        parser.add_argument("--keep", action="store_true")
        parser.add_argument("--torch-threads", type=int, default=1)

    def handle(self, *args, sizes, queries, source, json_path, keep, torch_threads, **options):
        if not (source / "memories.jsonl").exists():
            raise CommandError(f"{source} has no memories.jsonl")
        texts = [r["content"] for r in read_jsonl(source / "memories.jsonl")]
        questions = [q["query"] for q in read_jsonl(source / "queries.jsonl")][:queries]
        settings.EMBEDDING_QUERY_THREADS = torch_threads  # batches use every core regardless
        name = f"bench-{secrets.token_hex(4)}"
        namespace = namespace_get_or_create(name=name)
        rows, have = [], 0
        try:
            for size in sorted(sizes):
                start = time.perf_counter()
                while have < size:
                    count = min(BATCH, size - have)
                    items = [{"content": _text(texts, have + i)} for i in range(count)]
                    memory_batch_create(
                        namespace=namespace, items=items, dedupe=False,
                        check_near_duplicates=False, chunk=False, infer=False, door="cli",
                    )  # fmt: skip
                    have += count
                added_s = time.perf_counter() - start
                rows.append({"size": size, **self._latency(namespace, questions),
                             "ingest_per_s": round((size - (rows[-1]["size"] if rows else 0))
                                                   / max(added_s, 1e-9), 1)})  # fmt: skip
                self.stderr.write(json.dumps(rows[-1]))
        finally:
            querylog.flush()
            if not keep:
                Namespace.objects.filter(name=name).delete()
        self.stdout.write(format_rows(rows))
        if json_path:
            json_path.write_text(json.dumps(rows, indent=2))

    def _latency(self, namespace, questions: list[str]) -> dict:
        search(namespace=namespace, query=questions[0], log=False)  # warm caches and model
        times = []
        for q in questions:
            start = time.perf_counter()
            search(namespace=namespace, query=q, limit=10)
            times.append((time.perf_counter() - start) * 1000)
        p50, p95, p99 = np.percentile(times, [50, 95, 99])
        return {"p50_ms": round(p50, 1), "p95_ms": round(p95, 1), "p99_ms": round(p99, 1)}


def _text(texts: list[str], index: int) -> str:
    base = texts[index % len(texts)]
    return base if index < len(texts) else f"{base} (#{index // len(texts)})"


def format_rows(rows: list[dict]) -> str:
    lines = [
        "| memories | ingest / s | search p50 ms | p95 ms | p99 ms |",
        "|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(f"| {r['size']:,} | {r['ingest_per_s']} | {r['p50_ms']} | {r['p95_ms']} "
                     f"| {r['p99_ms']} |")  # fmt: skip
    return "\n".join(lines)
