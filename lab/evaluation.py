"""Retrieval metrics for `manage.py evaluate` (pure functions) and the evaluation run itself."""

from __future__ import annotations

import math
import secrets
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from django.db.models import Max

from apps.memories import dialog
from apps.memories.models import Memory, Namespace
from apps.search.config import SearchSettings
from apps.transfer.transfer import import_records, read_jsonl

KEYS = ("recall@5", "recall@10", "recall@20", "hit@10", "ndcg@10", "mrr", "p50_ms", "p95_ms")


def recall_at(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    return len(relevant.intersection(ranked[:k])) / len(relevant) if relevant else 0.0


def hit_at(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    return 1.0 if relevant.intersection(ranked[:k]) else 0.0


def ndcg_at(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    dcg = sum(1 / math.log2(i + 2) for i, key in enumerate(ranked[:k]) if key in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(k, len(relevant))))
    return dcg / ideal if ideal else 0.0


def reciprocal_rank(ranked: Sequence[str], relevant: set[str]) -> float:
    return next((1 / (i + 1) for i, key in enumerate(ranked) if key in relevant), 0.0)


def query_metrics(ranked: Sequence[str], relevant: set[str]) -> dict[str, float]:
    return {
        "recall@5": recall_at(ranked, relevant, 5),
        "recall@10": recall_at(ranked, relevant, 10),
        "recall@20": recall_at(ranked, relevant, 20),
        "hit@10": hit_at(ranked, relevant, 10),
        "ndcg@10": ndcg_at(ranked, relevant, 10),
        "mrr": reciprocal_rank(ranked, relevant),
    }


def summarize(rows: list[dict]) -> dict[str, float]:
    """Mean of the per-query metrics plus p50/p95 of the latencies."""
    if not rows:
        return {key: 0.0 for key in KEYS}
    out = {key: round(float(np.mean([r[key] for r in rows])), 4) for key in KEYS[:6]}
    latencies = [r["latency_ms"] for r in rows]
    out["p50_ms"] = round(float(np.percentile(latencies, 50)), 2)
    out["p95_ms"] = round(float(np.percentile(latencies, 95)), 2)
    return out


def report(rows: list[dict]) -> dict:
    by_category: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_category[row["category"]].append(row)
    return {
        "overall": summarize(rows),
        "by_category": {name: summarize(items) for name, items in sorted(by_category.items())},
        "queries": len(rows),
    }


def new_prefix() -> str:
    return f"eval-{secrets.token_hex(4)}-"


def load_dataset(
    directory: Path, prefix: str, progress: bool = True, only: Sequence[str] | None = None
) -> tuple[list, list]:
    """Import DIR/memories.jsonl into namespaces named prefix + original namespace (only the
    namespaces in `only` when given)."""
    memories = read_jsonl(directory / "memories.jsonl")
    queries = read_jsonl(directory / "queries.jsonl")
    if only is not None:
        memories = [m for m in memories if m["namespace"] in only]
        queries = [q for q in queries if q["namespace"] in only]
    for record in memories:
        record["namespace"] = prefix + record["namespace"]
    for query in queries:
        query["namespace"] = prefix + query["namespace"]
    import_records(memories, progress=progress)
    # What the background job writes after an import (apps/memories/dialog.py), written now:
    # the evaluation measures the store as it is once its jobs have run.
    for namespace in Namespace.objects.filter(name__in={m["namespace"] for m in memories}):
        dialog.write_queued(namespace)
    return memories, queries


def run_queries(
    queries: list[dict],
    search_fn: Callable[..., object],
    *,
    mode: str,
    disabled: Sequence[str] = (),
    config: SearchSettings | None = None,
    limit: int = 20,
    progress: Callable[[int], None] | None = None,
) -> list[dict]:
    """Each query through search() in its namespace, as of the newest memory there, with
    `config` (default: the settings') and the `disabled` stages switched off."""
    namespaces = {
        n.name: n for n in Namespace.objects.filter(name__in={q["namespace"] for q in queries})
    }
    as_of = dict(
        Memory.objects.filter(namespace__in=namespaces.values())
        .values_list("namespace__name")
        .annotate(newest=Max("created_at"))
    )
    public = {
        str(pk): ext
        for pk, ext in Memory.objects.filter(namespace__in=namespaces.values()).values_list(
            "id", "external_id"
        )
    }
    first = queries[0]
    warm = namespaces[first["namespace"]]
    search_fn(namespace=warm, query=first["query"], log=False, config=config)
    rows = []
    for number, q in enumerate(queries, start=1):
        namespace = namespaces[q["namespace"]]
        start = time.perf_counter()
        response = search_fn(
            namespace=namespace,
            query=q["query"],
            mode=mode,
            limit=limit,
            now=as_of[q["namespace"]],
            disabled_stages=disabled,
            config=config,
        )
        latency = (time.perf_counter() - start) * 1000
        ranked = [public.get(m["id"], m["id"]) for m in response.memories]
        row = query_metrics(ranked, set(q["relevant"]))
        row.update(
            category=q.get("category", "all"),
            latency_ms=latency,
            query=q["query"],
            ranked=ranked[:limit],
            relevant=q["relevant"],
            evidence_gap=response.flags["evidence_gap"],
            confidence=response.confidence,
            signals=response.signals,
        )
        rows.append(row)
        if progress:
            progress(number)
    return rows


def read_queries(directory: Path, prefix: str, only: Sequence[str] | None = None) -> list[dict]:
    queries = read_jsonl(directory / "queries.jsonl")
    if only is not None:
        queries = [q for q in queries if q["namespace"] in only]
    for query in queries:
        query["namespace"] = prefix + query["namespace"]
    return queries
