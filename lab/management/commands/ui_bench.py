"""python manage.py ui_bench [--size 100000] [--logs 100000] [--only graph,analytics]
                            [--source ../shared/benchmarks/scale-413k]

Server time of every web UI page on a namespace of SIZE memories. The namespace ("ui-bench")
is grown through memory_batch_create (the write path imports use) from a neutral-format corpus
and kept, so a second run only measures. Each page is requested in-process through Django's
test client (the whole middleware, view and template stack; no network), REPEAT times after one
warm-up; the report gives median and worst milliseconds and the query count. Browse page 500
starts from a keyset cursor built once (setup, not timed).

For the graph and analytics pages the namespace also gets LOGS search-log rows and EDGES
links (see _graph_and_logs: the links through the link service, then one PageRank run; the
log rows inserted directly, since LOGS real searches would take hours). `--only` times only the
pages whose name contains one of the given words.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
import statistics
import time
import uuid
from functools import partial
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.jobs.models import Job
from apps.jobs.services import job_execute
from apps.memories import services
from apps.memories.browse import cursor_after, listed
from apps.memories.models import CausalEdge, Memory
from apps.search import querylog, rollup
from apps.search.models import QueryLog
from apps.search.services import search
from apps.ui.demo import long_document
from lab.pages import logged_in_client

DEFAULT_SOURCE = settings.BASE_DIR.parent / "shared" / "benchmarks" / "scale-413k"
BATCH = 500
USER = "ui-bench"
GRAPH_EDGES = 3000
STRATEGY_SETS = [
    {"keyword": 1, "semantic": 1},
    {"semantic": 1},
    {"keyword": 1},
    {"semantic": 1, "graph": 1},
    {"keyword": 1, "semantic": 1, "exact": 1},
]


class Command(BaseCommand):
    help = "Time every web UI page on a large namespace (docs/benchmarks.md)."

    def add_arguments(self, parser):
        parser.add_argument("--size", type=int, default=100_000)
        parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
        parser.add_argument("--namespace", default="ui-bench")
        parser.add_argument("--repeat", type=int, default=5)
        parser.add_argument(
            "--bare-copies",
            action="store_true",
            help="Copies (--write-path-only) carry no embedding, so they skip the HNSW index: "
            "much faster to make; for the pages that read no vectors (graph, analytics). The "
            "search pages' figures are then not those of SIZE embedded rows.",
        )
        parser.add_argument("--logs", type=int, default=100_000, help="search-log rows to hold")
        parser.add_argument("--edges", type=int, default=GRAPH_EDGES, help="links to hold")
        parser.add_argument("--only", default="", help="comma-separated words of page names")
        parser.add_argument(
            "--write-path-only",
            type=int,
            default=None,
            help="Ingest only this many through the write path and fill the rest with copies "
            "of those rows (same text plus a suffix, same embedding and tags), for a machine "
            "too busy to embed SIZE texts in time. The report says how many were copied.",
        )

    def handle(
        self,
        *args,
        size: int,
        source: Path,
        namespace: str,
        repeat: int,
        write_path_only,
        logs: int,
        edges: int,
        only: str,
        bare_copies: bool = False,
        **options,
    ):
        settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
        ns = services.namespace_get_or_create(name=namespace)
        self._grow(ns, min(size, write_path_only or size), source)
        copied = _copy_rows(ns, size, bare=bare_copies, out=self.stderr)
        self._extras(ns)
        _graph_and_logs(ns, logs, edges, self.stderr)
        client = logged_in_client(USER)
        rows = []
        words = [w.strip() for w in only.split(",") if w.strip()]
        for name, url in self._pages(ns):
            if words and not any(w in name for w in words):
                continue
            rows.append(self._time(client, name, url, repeat))
            self.stderr.write(json.dumps(rows[-1]))
        total = Memory.objects.filter(namespace=ns).count()
        searches = QueryLog.objects.filter(namespace=ns).count()
        edges = CausalEdge.objects.filter(namespace=ns).count()
        self.stdout.write(
            f"\nnamespace {namespace}: {total} memories ({copied} copied now), "
            f"{searches} search-log rows, {edges} links\n"
        )
        self.stdout.write("| page | median ms | worst ms | queries |\n|---|---:|---:|---:|")
        for row in rows:
            self.stdout.write(
                f"| {row['page']} | {row['median_ms']} | {row['worst_ms']} | {row['queries']} |"
            )

    def _grow(self, ns, size: int, source: Path) -> None:
        have = Memory.objects.filter(namespace=ns).count()
        if have >= size:
            return
        records = _records(source, size)
        started, added = time.perf_counter(), 0
        while have < size:
            count = min(BATCH, size - have)
            items = []
            for i in range(have, have + count):
                record = records[i % len(records)]
                suffix = "" if i < len(records) else f" ({i // len(records)})"
                items.append(
                    {
                        "content": record["content"] + suffix,
                        "tags": record.get("tags", []),
                        "created_at": record.get("created_at"),
                        "importance": round((i % 97) / 96, 3),
                    }
                )
            services.memory_batch_create(
                namespace=ns,
                items=items,
                dedupe=False,
                check_near_duplicates=False,
                chunk=False,
                infer=False,
                door="cli",
            )
            have, added = have + count, added + count
            if added % 10_000 == 0:
                rate = added / (time.perf_counter() - started)
                self.stderr.write(f"{have} memories ({rate:.0f}/s)")

    def _extras(self, ns) -> None:
        """What the pages show beyond rows: history, links, trash, searches that returned it."""
        if Memory.objects.filter(namespace=ns, title="UI bench anchor").exists():
            return
        anchor = services.memory_create(
            namespace=ns, title="UI bench anchor", content="Return a list of all group entries."
        ).memory
        for i in range(5):
            services.memory_update(memory=anchor, content=f"Return a list of group entries ({i}).")
        others = list(Memory.objects.filter(namespace=ns).exclude(pk=anchor.pk)[:12])
        for other in others[:5]:
            services.edge_create(source=anchor, target=other, relation="relates_to")
        for other in others[5:10]:
            services.memory_delete(memory=other)
        services.memory_create(
            namespace=ns, title="UI bench document", content=_document(), file_path="bench.md"
        )
        for query in ("list group entries", "return a list", "available groups"):
            search(namespace=ns, query=query)
        querylog.flush()

    def _pages(self, ns) -> list[tuple[str, str]]:
        anchor = Memory.objects.get(namespace=ns, title="UI bench anchor")
        document = Memory.objects.filter(namespace=ns, title__startswith="UI bench document")
        document = document.order_by("created_at").first()
        rows = listed(Memory.objects.filter(namespace=ns, archived=False))
        depth = min(499 * 50, Memory.objects.filter(namespace=ns).count() // 2)
        deep = rows.order_by("-created_at", "-id")[depth - 1]
        base = f"/ns/{ns.name}/memories/"
        graph = f"/ns/{ns.name}/graph/data/"
        return [
            ("search (hybrid)", f"/?namespace={ns.name}&q=return+a+list+of+group+entries"),
            (
                "search (filters: tag + time)",
                f"/?namespace={ns.name}&q=group+entries&tags=python-docs&after=2024-01-01",
            ),
            ("explain", f"/explain/?namespace={ns.name}&q=return+a+list+of+group+entries"),
            ("browse page 1 (newest)", base),
            (f"browse page {depth // 50 + 1} (newest)", f"{base}?cursor={cursor_after(deep)}"),
            ("browse by importance", f"{base}?sort=importance"),
            ("browse by PageRank", f"{base}?sort=pagerank"),
            ("browse most used", f"{base}?sort=used"),
            ("browse filtered (tag)", f"{base}?tag=python-docs"),
            ("memory page", f"/memories/{anchor.pk}/"),
            ("memory page (document chunk)", f"/memories/{document.pk}/"),
            ("edit form", f"/memories/{anchor.pk}/edit/"),
            ("history", f"/memories/{anchor.pk}/history/"),
            ("create form", f"/ns/{ns.name}/memories/new/"),
            ("trash", f"/ns/{ns.name}/trash/"),
            ("members", f"/ns/{ns.name}/members/"),
            ("connect an assistant", f"/ns/{ns.name}/connect/"),
            ("graph page", f"/ns/{ns.name}/graph/"),
            ("graph data: linked memories (500 by PageRank)", graph),
            ("graph data: all memories (500 by PageRank)", f"{graph}?unlinked=on"),
            ("graph data: neighbourhood depth 2", f"{graph}?memory={anchor.pk}&depth=2"),
            ("analytics (7 days)", f"/ns/{ns.name}/analytics/?days=7"),
            ("analytics (30 days)", f"/ns/{ns.name}/analytics/?days=30"),
            ("analytics (90 days: every log row)", f"/ns/{ns.name}/analytics/?days=90"),
            ("analytics (365 days)", f"/ns/{ns.name}/analytics/?days=365"),
        ]  # fmt: skip

    def _time(self, client: Client, name: str, url: str, repeat: int) -> dict:
        response = client.get(url)  # warm-up
        if response.status_code != 200:
            raise CommandError(f"{name}: {url} answered {response.status_code}")
        times = []
        for _ in range(repeat):
            with CaptureQueriesContext(connection) as queries:
                start = time.perf_counter()
                client.get(url)
                times.append((time.perf_counter() - start) * 1000)
        return {
            "page": name,
            "median_ms": round(statistics.median(times), 1),
            "worst_ms": round(max(times), 1),
            "queries": len(queries.captured_queries),
        }


def _records(source: Path, limit: int) -> list[dict]:
    """The first `limit` records of the corpus (it is cycled when shorter)."""
    plain, packed = source / "memories.jsonl", source / "memories.jsonl.gz"
    if not plain.exists() and not packed.exists():
        raise CommandError(f"{source} has no memories.jsonl(.gz)")
    opener = partial(open, plain, encoding="utf-8")
    if not plain.exists():
        opener = partial(gzip.open, packed, "rt", encoding="utf-8")
    records = []
    with opener() as handle:
        for line in handle:
            if line.strip():
                records.append(json.loads(line))
            if len(records) >= limit:
                break
    return records


def _document() -> str:
    return long_document()


def _copy_rows(ns, size: int, batch: int = 2000, *, bare: bool = False, out=None) -> int:
    """Top the namespace up to `size` with copies of its write-path rows (see --write-path-only):
    new ids, the text with a copy suffix and its hash, the same embedding, tags and dates."""
    have = Memory.objects.filter(namespace=ns).count()
    originals = Memory.objects.filter(namespace=ns, metadata__copy_of__isnull=True)
    originals = originals.exclude(metadata__has_key="chunk_index").exclude(
        title__startswith="UI bench"
    )
    originals = originals.order_by("created_at", "id")
    through = Memory.tags.through
    # A later run goes on numbering the copies, so their texts (and hashes) stay unique.
    made = Memory.objects.filter(namespace=ns, metadata__has_key="copy_of").count()
    copied, round_ = 0, made // max(originals.count(), 1)
    while have < size:
        round_ += 1
        offset = 0
        while have < size:
            rows = list(originals.prefetch_related("tags")[offset : offset + batch])
            if not rows:
                break
            offset += batch
            copies, links = [], []
            for row in rows[: size - have]:
                content = f"{row.content} (copy {round_})"
                copy = Memory(
                    id=uuid.uuid4(),
                    namespace=ns,
                    content=content,
                    title=row.title,
                    category=row.category,
                    tier=row.tier,
                    importance=row.importance,
                    created_at=row.created_at,
                    updated_at=row.updated_at,
                    file_path=row.file_path,
                    embedding=None if bare else row.embedding,
                    embedding_model="" if bare else row.embedding_model,
                    content_hash=hashlib.sha256(content.encode()).hexdigest(),
                    metadata={"copy_of": str(row.pk)},
                )
                copies.append(copy)
                links += [through(memory_id=copy.id, tag_id=t.pk) for t in row.tags.all()]
            Memory.objects.bulk_create(copies, batch_size=1000)
            through.objects.bulk_create(links, batch_size=5000, ignore_conflicts=True)
            have, copied = have + len(copies), copied + len(copies)
            if out is not None and copied % 10_000 < batch:
                out.write(f"{have} memories ({copied} copied)")
    return copied


def _graph_and_logs(ns, logs: int, edges: int, out, seed: int = 11) -> None:
    """Links and search-log rows for the graph and analytics pages (kept between runs).

    EDGES links (GRAPH_EDGES by default) between memories drawn at random, through the link
    service (each a revision), then one PageRank run (a JobRun row, shown by analytics). Then
    search-log rows up to LOGS, inserted directly: 5-8 results each among 5,000 memories (some
    returned far more often than others), one to three strategies per result, latency 40-400 ms
    with a long tail, about 8% evidence gaps and 4% without result, feedback on about 5%, query
    texts from 3,000 distinct ones, dates spread over the last 90 days.
    """
    rng = random.Random(seed)
    have_edges = CausalEdge.objects.filter(namespace=ns).count()
    if have_edges < edges:
        ids = list(
            Memory.objects.filter(namespace=ns, archived=False)
            .order_by("id")
            .values_list("id", flat=True)[:20_000]
        )
        memories = Memory.objects.in_bulk(rng.sample(ids, min(len(ids), 4000)))
        pool = list(memories.values())
        relations = ["relates_to"] * 5 + ["caused", "depends_on", "supersedes", "contradicts"]
        started = time.perf_counter()
        for i in range(edges - have_edges):
            # a few hubs: a quarter of the links end on one of 40 memories
            source = rng.choice(pool)
            target = rng.choice(pool[:40]) if rng.random() < 0.25 else rng.choice(pool)
            if source.pk != target.pk:
                services.edge_create(
                    source=source, target=target, relation=rng.choice(relations), door="cli"
                )
            if (i + 1) % 500 == 0:
                rate = (i + 1) / (time.perf_counter() - started)
                out.write(f"{have_edges + i + 1} links ({rate:.0f}/s)")
        run = job_execute(Job.PAGERANK, namespace_id=ns.pk, trigger="command")
        out.write(f"pagerank: {run.duration_ms} ms, {run.changes}")
    have = QueryLog.objects.filter(namespace=ns).count()
    if have >= logs:
        return
    ids = [
        str(pk)
        for pk in Memory.objects.filter(namespace=ns, archived=False)
        .order_by("id")
        .values_list("id", flat=True)[:5000]
    ]
    texts = list(
        Memory.objects.filter(namespace=ns).order_by("id").values_list("content", flat=True)[:3000]
    )
    texts = [" ".join(t.split()[:6]).lower() for t in texts]
    started, first_new = time.perf_counter(), None
    while have < logs:
        batch = []
        for _ in range(min(5000, logs - have)):
            gap, empty = rng.random() < 0.08, rng.random() < 0.04
            results = []
            if not empty:
                for rank in range(rng.randint(5, 8)):
                    index = min(int(rng.paretovariate(1.2)) - 1, len(ids) - 1)
                    pick = ids[index * 37 % len(ids)] if rng.random() < 0.5 else rng.choice(ids)
                    ranks = {k: rank + 1 for k in rng.choice(STRATEGY_SETS)}
                    results.append({"id": pick, "score": round(1 - rank * 0.1, 3), "ranks": ranks})
            judged = results and rng.random() < 0.05
            batch.append(
                QueryLog(
                    namespace=ns,
                    query=rng.choice(texts),
                    results=results,
                    latency_ms=round(40 + rng.expovariate(1 / 60) + rng.random() * 100, 1),
                    evidence_gap=gap or empty,
                    was_useful=(rng.random() < 0.6) if judged else None,
                    result_feedback=(
                        {r["id"]: rng.random() < 0.5 for r in results[:3]} if judged else {}
                    ),
                    feedback_at=timezone.now() if judged else None,
                )
            )
        created = QueryLog.objects.bulk_create(batch, batch_size=2500)
        first_new = first_new or created[0].pk
        have += len(batch)
        rate = have / (time.perf_counter() - started)
        out.write(f"{have} search-log rows ({rate:.0f}/s)")
    with connection.cursor() as cursor:  # auto_now_add: spread the dates afterwards
        cursor.execute(
            "UPDATE search_querylog SET created_at = now() - random() * interval '90 days' "
            "WHERE namespace_id = %s AND id >= %s",
            [ns.pk, first_new],
        )
        cursor.execute("ANALYZE search_querylog")
    rollup.forget(namespace_id=ns.pk)  # the log's days changed under any roll-up
