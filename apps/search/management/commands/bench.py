"""python manage.py bench [--sizes 1000 10000 100000] [--queries 100] [--json FILE]
                         [--source ../shared/benchmarks/scale-413k]

Grows one fresh namespace to each size (ingest through memory_batch_create, the write path
imports use), then times search() at that size and reports the database and HNSW index sizes
and the HNSW recall@10 against an exact scan. Text comes from a dataset in the neutral format
(memories.jsonl or memories.jsonl.gz; default: the LoCoMo dev set), cycled with a numbered
suffix past its end."""

from __future__ import annotations

import gzip
import json
import secrets
import time
from pathlib import Path

import numpy as np
from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction

from apps.memories.embeddings import embed_query
from apps.memories.models import Namespace
from apps.memories.services import memory_batch_create, namespace_get_or_create
from apps.memories.transfer import read_jsonl
from apps.search import querylog
from apps.search.pipeline.candidates import POOL
from apps.search.pipeline.scope import MEMORY, Scope
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

    def handle(self, *args, sizes, queries, source, json_path, keep, **options):
        texts = _read_texts(source)
        questions = [q["query"] for q in read_jsonl(source / "queries.jsonl")][:queries]
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
                        namespace=namespace,
                        items=items,
                        dedupe=False,
                        check_near_duplicates=False,
                        chunk=False,
                        infer=False,
                        door="cli",
                    )
                    have += count
                added_s = time.perf_counter() - start
                added = size - (rows[-1]["size"] if rows else 0)
                rows.append(
                    {
                        "size": size,
                        **self._latency(namespace, questions),
                        "ingest_per_s": round(added / max(added_s, 1e-9), 1),
                        **_sizes(),
                        "ann_recall@10": _ann_recall(namespace, questions[:50]),
                    }
                )
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


def _read_texts(source: Path) -> list[str]:
    plain, packed = source / "memories.jsonl", source / "memories.jsonl.gz"
    if plain.exists():
        return [r["content"] for r in read_jsonl(plain)]
    if packed.exists():
        with gzip.open(packed, "rt", encoding="utf-8") as handle:
            return [json.loads(line)["content"] for line in handle if line.strip()]
    raise CommandError(f"{source} has no memories.jsonl(.gz)")


def _sizes() -> dict:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_database_size(current_database()), pg_total_relation_size(%s), "
            "pg_relation_size('memory_embedding_hnsw')",
            [MEMORY],
        )
        database, table, hnsw = cursor.fetchone()
    mb = 1024 * 1024
    return {
        "db_mb": round(database / mb),
        "table_mb": round(table / mb),
        "hnsw_mb": round(hnsw / mb),
    }


def _ann_recall(namespace, questions: list[str]) -> float:
    """Share of the exact top 10 (sequential scan) that the HNSW scan search() uses finds."""
    where, params = Scope(namespace_id=namespace.id).where()
    sql = (
        f"SELECT m.id FROM {MEMORY} m WHERE {where} AND m.embedding IS NOT NULL "
        "ORDER BY m.embedding <=> %s::vector LIMIT 10"
    )
    found = total = 0
    for q in questions:
        literal = "[" + ",".join(f"{x:.6f}" for x in embed_query(q).tolist()) + "]"
        with transaction.atomic(), connection.cursor() as cursor:
            # The settings semantic_search() uses for its candidate pool.
            cursor.execute(f"SET LOCAL hnsw.ef_search = {max(40, POOL)}")
            cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            cursor.execute(sql, params + [literal])
            ann = {r[0] for r in cursor.fetchall()}
            cursor.execute("SET LOCAL enable_indexscan = off")
            cursor.execute(sql, params + [literal])
            exact = {r[0] for r in cursor.fetchall()}
        found += len(ann & exact)
        total += len(exact)
    return round(found / max(total, 1), 3)


def _text(texts: list[str], index: int) -> str:
    base = texts[index % len(texts)]
    return base if index < len(texts) else f"{base} (#{index // len(texts)})"


def format_rows(rows: list[dict]) -> str:
    lines = [
        "| memories | ingest / s | search p50 ms | p95 ms | p99 ms | DB MB | table MB "
        "| HNSW MB | ANN recall@10 |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['size']:,} | {r['ingest_per_s']} | {r['p50_ms']} | {r['p95_ms']} "
            f"| {r['p99_ms']} | {r['db_mb']} | {r['table_mb']} | {r['hnsw_mb']} "
            f"| {r['ann_recall@10']} |"
        )
    return "\n".join(lines)
