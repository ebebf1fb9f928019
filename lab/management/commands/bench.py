"""python manage.py bench [--sizes 1000 10000 100000] [--queries 100] [--json FILE]
                         [--source ../shared/benchmarks/scale-413k] [--vectors DIR]
                         [--model-sample 2000] [--spread 100] [--reindex]
                         [--prepare-vectors N]

Grows one fresh namespace to each size through memory_batch_create (the write path imports
use, batches of 500), then times search() at that size (single client, query embedding
included), with and without a tag filter, and reports ingest rates, the database, table and
HNSW index sizes, PostgreSQL's memory and the HNSW recall@10 against an exact scan. The
modelled ingest is timed next to the encoder alone on the same texts (texts/s each, and their
ratio), so what the write path costs beyond its encoder shows.

Text comes from a dataset in the neutral format (memories.jsonl or memories.jsonl.gz; default:
the LoCoMo dev set) with its tags and timestamps, cycled with a numbered suffix past its end.

Vectors: without --vectors every memory goes through the model. With --vectors DIR, the
vectors computed once for the dataset's texts (`--prepare-vectors N` fills DIR, resumable)
are handed to the same write path, and only the last --model-sample memories of each step go
through the model (that rate is the ingest rate reported). A row past the cached texts (the
numbered-suffix copies, or texts not cached yet) re-uses the vector of the text it was cycled
from plus deterministic noise of the size the suffix itself causes (`variant_noise`); how many
rows carry such vectors is reported with every row of figures.

--spread N then spreads the largest size over N namespaces of unequal sizes (one holds 1%) in
the same database and times search per namespace. --reindex times building the HNSW index
over the whole table at the end."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import secrets
import time
import uuid
from pathlib import Path

import numpy as np
from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction
from django.utils import timezone

from apps.memories import passages, unindexed
from apps.memories.duplicate_hash import content_hash
from apps.memories.models import Memory, Namespace
from apps.memories.services import memory_batch_create, namespace_get_or_create
from apps.memories.services.tags import tag_ids
from apps.search import querylog
from apps.search.config import search_settings
from apps.search.pipeline import retrieve
from apps.search.pipeline.candidates import POOL
from apps.search.pipeline.scope import Scope
from apps.search.services import search
from apps.transfer.transfer import read_jsonl, refresh_memory_statistics
from apps.vectors import embeddings, nearest
from apps.vectors.embeddings import embed_query
from lab import stage_profile, vector_cache

DEFAULT_SOURCE = Path(__file__).resolve().parents[3].parent / "shared/benchmarks/locomo-dev"
BATCH = 500
HNSW_INDEX = "memory_embedding_half_hnsw"
# Cosine between a text's vector and the vector of the same text with " (#k)" appended,
# measured with the default model (onnx) on 100 random scale texts: mean 0.989, min 0.960;
# variant_vector() moves a cached vector by exactly this much.
VARIANT_COSINE = 0.989
HNSW_SQL = (
    f"CREATE INDEX {HNSW_INDEX} ON memories_memory USING hnsw "
    "((embedding::halfvec(384)) halfvec_cosine_ops) WITH (m = 16, ef_construction = 64) "
    "WHERE vector_indexed"
)


class Command(BaseCommand):
    help = "Ingest rate and search latency (p50/p95/p99) at growing namespace sizes."

    def add_arguments(self, parser):
        parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
        parser.add_argument("--queries", type=int, default=100)
        parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
        parser.add_argument("--json", dest="json_path", type=Path)
        parser.add_argument("--keep", action="store_true")
        parser.add_argument("--vectors", type=Path, help="cache directory of dataset vectors")
        parser.add_argument("--prepare-vectors", type=int, metavar="N", default=0)
        parser.add_argument("--model-sample", type=int, default=2_000)
        parser.add_argument("--spread", type=int, default=0, metavar="NAMESPACES")
        parser.add_argument(
            "--spread-total",
            type=int,
            default=0,
            help="memories over the spread namespaces (default: the largest size); the first "
            "namespace always holds 1%% of the largest size",
        )
        parser.add_argument("--reindex", action="store_true")
        parser.add_argument(
            "--namespace",
            help="grow (or, already at the size, only measure) this namespace instead of a new "
            "bench-* one; it is kept, so a later run measures it again without a fill, and "
            "`lab/search_cost.py --data SOURCE --reuse PREFIX` compares two checkouts on it "
            "when it is named PREFIX + the dataset's namespace (bench-100k-scale: bench-100k-)",
        )
        parser.add_argument(
            "--profile",
            action="store_true",
            help="at each size, also the cost of one search by stage (lab/stage_profile.py: "
            "CPU and SQL statements per stage, CPU per thread) over the same questions",
        )
        parser.add_argument("--recall-queries", type=int, default=50)
        parser.add_argument(
            "--bulk",
            action="store_true",
            help="drop the HNSW index for the cached-vector part of each step and build it "
            "again afterwards (timed), as a bulk import would; the modelled sample is written "
            "with the index in place. A run stopped in between leaves the index dropped: "
            "`bench --reindex --sizes 1` builds it again",
        )
        parser.add_argument(
            "--copy",
            action="store_true",
            help="load the cached-vector part of each step with COPY (the columns the write "
            "path sets, tags through the same trigger; no revision rows) instead of "
            "memory_batch_create; the modelled sample still goes through the write path",
        )
        parser.add_argument(
            "--lock",
            type=Path,
            help="hold this flock and raise this process and its PostgreSQL backend to nice 0 "
            "while timing (fills stay at the priority the command was started with)",
        )

    def handle(self, *args, **opts):
        source = opts["source"]
        records = _read_records(source)
        texts = [r["content"] for r in records]
        if opts["prepare_vectors"]:
            if not opts["vectors"]:
                raise CommandError("--prepare-vectors needs --vectors DIR")
            vector_cache.build(texts, opts["vectors"], limit=opts["prepare_vectors"])
            return
        cached = _cached_vectors(texts, opts["vectors"]) if opts["vectors"] else None
        embeddings.warm()  # model load is not part of any rate
        self.measuring = _Measuring(opts["lock"])
        self.bench = _Fill(records, cached, opts["model_sample"], self.stderr, bulk=opts["bulk"])
        self.bench.copy = opts["copy"]
        self.bench.measuring = self.measuring
        questions = [q["query"] for q in read_jsonl(source / "queries.jsonl")]
        questions = questions[: opts["queries"]]
        name = opts["namespace"] or f"bench-{secrets.token_hex(4)}"
        namespace = namespace_get_or_create(name=name)
        self.bench.have = Memory.every_state.filter(namespace=namespace).count()
        made = [] if opts["namespace"] else [name]  # a namespace named here is never removed
        rows: list[dict] = []
        try:
            for size in sorted(opts["sizes"]):
                fill = self.bench.grow(namespace, size)
                # As an import does when it commits: the figures are of a namespace the
                # planner knows, not of the minute before autovacuum's next ANALYZE.
                start = time.perf_counter()
                refresh_memory_statistics()
                fill["analyze_s"] = round(time.perf_counter() - start, 2)
                with self.measuring as conditions:
                    row = {"size": size, **fill, **self._latency(namespace, questions)}
                    if opts["profile"]:
                        row["profile"] = self._profile(name, questions)
                    row.update(self._filtered(namespace, questions, records))
                    row.update(_sizes())
                    row.update(conditions())
                recall_questions = questions[: opts["recall_queries"]]
                row["ann_recall@10"] = _ann_recall(namespace, recall_questions)
                rows.append(row)
                self.stderr.write(json.dumps(row))
            if opts["spread"]:
                total = opts["spread_total"] or max(opts["sizes"])
                spread = self._spread(opts["spread"], total, max(opts["sizes"]), questions, made)
                rows.append({"spread": spread})
                self.stderr.write(json.dumps(spread))
            if opts["reindex"]:
                rows.append({"reindex": _reindex()})
                self.stderr.write(json.dumps(rows[-1]))
        finally:
            querylog.flush()
            if not opts["keep"]:
                Namespace.objects.filter(name__in=made).delete()
        self.stdout.write(format_rows([r for r in rows if "size" in r]))
        if opts["json_path"]:
            opts["json_path"].write_text(json.dumps(rows, indent=2, default=str))

    def _latency(self, namespace, questions: list[str], **filters) -> dict:
        search(namespace=namespace, query="warm up the caches", log=False, **filters)
        times = []
        short = 0
        for q in questions:
            start = time.perf_counter()
            found = search(namespace=namespace, query=q, limit=10, **filters)
            times.append((time.perf_counter() - start) * 1000)
            short += len(_results(found)) < 10
        p50, p95, p99 = np.percentile(times, [50, 95, 99])
        return {
            "p50_ms": round(p50, 1),
            "p95_ms": round(p95, 1),
            "p99_ms": round(p99, 1),
            "short_pages": short,
        }

    def _profile(self, name: str, questions: list[str]) -> dict:
        """The stage profile of the same questions at this size, printed as it comes."""
        asked = [{"namespace": name, "query": q} for q in questions]
        cost = stage_profile.profile(asked, search, mode="hybrid", limit=10)
        self.stdout.write(stage_profile.format_profile(cost))
        return cost

    def _filtered(self, namespace, questions: list[str], records: list[dict]) -> dict:
        """p95 with a tag filter on the rarest source tag (a few percent of the rows)."""
        counts: dict[str, int] = {}
        for r in records[: self.bench.have]:
            for t in r.get("tags") or []:
                counts[t] = counts.get(t, 0) + 1
        if not counts:
            return {}
        tag = min(counts, key=counts.get)
        got = self._latency(namespace, questions[:50], tags=[tag])
        share = round(100 * counts[tag] / max(self.bench.have, 1), 1)
        return {
            "tag_filter": f"{tag} ({share}%)",
            "tag_p50_ms": got["p50_ms"],
            "tag_p95_ms": got["p95_ms"],
            "tag_short_pages": got["short_pages"],
        }

    def _spread(
        self, count: int, total: int, largest: int, questions: list[str], made: list[str]
    ) -> dict:
        """`total` memories over `count` namespaces of unequal sizes (Zipf-like; the first holds
        1% of `largest`), in the same table and index as the namespace grown before; search
        timed in the 1% namespace, the largest and a middle one."""
        weights = 1.0 / np.arange(1, count) ** 0.8
        sizes = [max(1, round(largest * 0.01))]
        rest = total - sizes[0]
        sizes += [max(1, int(w)) for w in rest * weights / weights.sum()]
        sizes[1] += total - sum(sizes)
        fill = _Fill(self.bench.records, self.bench.cached, 0, self.stderr, offset=self.bench.have)
        fill.copy = self.bench.copy
        # With --bulk the index goes once for the whole spread and is built once after it, as
        # a bulk import would; otherwise every row is added to the HNSW graph as it comes.
        if self.bench.bulk:
            with connection.cursor() as cursor:
                cursor.execute(f"DROP INDEX IF EXISTS {HNSW_INDEX}")
        spaces = []
        start = time.perf_counter()
        for i, size in enumerate(sizes):
            name = f"bench-spread-{secrets.token_hex(3)}-{i}"
            made.append(name)
            ns = namespace_get_or_create(name=name)
            fill.have = 0
            fill.grow(ns, size, quiet=True)
            spaces.append((ns, size))
            done = sum(s for _, s in spaces)
            rate = done / (time.perf_counter() - start)
            self.stderr.write(
                f"spread {i + 1}/{count} namespaces, {done:,}/{total:,} ({rate:.0f}/s)\n"
            )
        filled_s = time.perf_counter() - start
        out = {"namespaces": count, "total": total, "fill_s": round(filled_s, 1)}
        if self.bench.bulk:
            out["index_build_s"] = _build_index()
        out["variant_vector_rows"] = fill.variant_rows
        out["table_rows"] = _table_rows()
        refresh_memory_statistics()
        out.update(_sizes())
        order = sorted(range(len(spaces)), key=lambda i: spaces[i][1])
        picks = {"1%": 0, "largest": order[-1], "median": order[len(order) // 2]}
        for label, i in picks.items():
            ns, size = spaces[i]
            with self.measuring as conditions:
                out[label] = {"size": size, **self._latency(ns, questions[:100]), **conditions()}
            out[label]["ann_recall@10"] = _ann_recall(ns, questions[:30])
        return out


def _results(found) -> list:
    return found.memories


class _Fill:
    """Grows a namespace along the dataset, with cached vectors where it may use them."""

    def __init__(self, records, cached, model_sample, log, offset: int = 0, bulk: bool = False):
        self.records, self.cached, self.sample, self.log = records, cached, model_sample, log
        self.bulk = bulk
        self.have = 0
        self.offset = offset  # where in the dataset this fill starts (spread namespaces)
        self.variant_rows = 0
        self.measuring = _Measuring(None)
        self.copy = False

    def grow(self, namespace, size: int, quiet: bool = False) -> dict:
        modelled = 0 if self.cached is None else min(self.sample, size - self.have)
        cached_until = size - modelled if self.cached is not None else self.have
        out = {}
        dropped = self.bulk and self.have < cached_until
        if dropped:
            with connection.cursor() as cursor:
                cursor.execute(f"DROP INDEX IF EXISTS {HNSW_INDEX}")
        start = time.perf_counter()
        cached_n = 0
        while self.have < cached_until:
            if self.copy:
                count = min(20 * BATCH, cached_until - self.have)
                self._copy(namespace, count)
            else:
                count = min(BATCH, cached_until - self.have)
                self._write(namespace, count, with_vectors=True)
            cached_n += count
            if not quiet and self.have % 10_000 < 20 * BATCH:
                rate = cached_n / (time.perf_counter() - start)
                self.log.write(f"fill {self.have:,}/{size:,} ({rate:.0f}/s, cached vectors)\n")
        cached_s = time.perf_counter() - start
        if dropped:
            out["index_build_s"] = _build_index()
        model_n, model_s = 0, 0.0
        if self.have < size:
            with self.measuring as conditions:
                out["encoder_per_s"] = self._encoder_rate(size)
                start = time.perf_counter()
                while self.have < size:
                    count = min(BATCH, size - self.have)
                    self._write(namespace, count, with_vectors=False)
                    model_n += count
                model_s = time.perf_counter() - start
                out["ingest_conditions"] = conditions()
        # A large write leaves its rows outside the HNSW index for the vector_index job
        # (apps/vectors/vector_index.py): searches below are timed once it has run, and the
        # catch-up is reported beside the write path's own rate.
        start = time.perf_counter()
        caught_up = unindexed.index_waiting(namespace)["rows_indexed"]
        index_s = time.perf_counter() - start
        if caught_up:
            out["vector_index_rows"], out["vector_index_s"] = caught_up, round(index_s, 1)
        out["variant_vector_rows"] = self.variant_rows
        if model_n:
            out["ingest_per_s"] = round(model_n / max(model_s, 1e-9), 1)
            out["ingest_measured_over"] = model_n
            out["ingest_vs_encoder"] = round(out["ingest_per_s"] / out["encoder_per_s"], 2)
            if caught_up:
                whole = model_s + index_s * min(1.0, model_n / caught_up)
                out["ingest_with_index_per_s"] = round(model_n / max(whole, 1e-9), 1)
            if not quiet:
                self.log.write(
                    f"ingest of {model_n:,} texts: encoder alone {out['encoder_per_s']}/s, "
                    f"write path {out['ingest_per_s']}/s ({out['ingest_vs_encoder']:.0%} of "
                    "the encoder)"
                    + (
                        f"; {out['ingest_with_index_per_s']}/s with the HNSW index caught up\n"
                        if caught_up
                        else "\n"
                    )
                )
        if cached_n:
            out["ingest_cached_vectors_per_s"] = round(cached_n / max(cached_s, 1e-9), 1)
        return out

    def _encoder_rate(self, size: int) -> float:
        """Texts/s of the encoder alone on the texts the write path is about to store, called
        as the write path calls it (batches of BATCH, passages pooled in the same call)."""
        indexes = range(self.offset + self.have, self.offset + size)
        rows = [Memory(title="", content=self._item(i)["content"]) for i in indexes]
        start = time.perf_counter()
        for at in range(0, len(rows), BATCH):
            passages.embed_memories(rows[at : at + BATCH])
        return round(len(rows) / max(time.perf_counter() - start, 1e-9), 1)

    def _write(self, namespace, count: int, *, with_vectors: bool) -> None:
        indexes = range(self.offset + self.have, self.offset + self.have + count)
        items = [self._item(i) for i in indexes]
        vectors = None
        if with_vectors:
            vectors = np.stack([self._vector(i) for i in indexes])
        memory_batch_create(
            namespace=namespace,
            items=items,
            dedupe=False,
            check_near_duplicates=False,
            chunk=False,
            infer=False,
            door="cli",
            vectors=vectors,
        )
        self.have += count

    def _copy(self, namespace, count: int) -> None:
        """Rows as the write path stores them (content hash, tags, timestamps, vector), by
        COPY. As in the write path, the tag links go first (their foreign key is checked at
        commit), so the row trigger computes each search vector with its tags on insert."""
        indexes = range(self.offset + self.have, self.offset + self.have + count)
        model = embeddings.model_name()
        rows, links = [], []
        for i in indexes:
            item = self._item(i)
            key = uuid.uuid4()
            when = item.get("created_at") or timezone.now().isoformat()
            vector = nearest.vector_literal(self._vector(i))
            rows.append(
                (key, when, when, namespace.pk, "", item["content"], "note", "", "",
                 "{}", "normal", 0.5, 0.0, 1.0, 0, vector, model,
                 content_hash(item["content"]), False, "{}")
            )  # fmt: skip
            links += [(key, t) for t in item.get("tags", [])]
        with transaction.atomic(), connection.cursor() as cursor:
            ids = tag_ids(t for _, t in links)
            with cursor.copy("COPY memories_memory_tags (memory_id, tag_id) FROM STDIN") as copy:
                for key, t in links:
                    copy.write_row((key, ids[t]))
            sql = (
                "COPY memories_memory (id, created_at, updated_at, namespace_id, title, content, "
                "category, file_path, source, trigger_phrases, tier, importance, pagerank_score, "
                "stability, access_count, embedding, embedding_model, content_hash, archived, "
                "metadata) FROM STDIN"
            )
            with cursor.copy(sql) as copy:
                for row in rows:
                    copy.write_row(row)
        self.have += count

    def _item(self, index: int) -> dict:
        n = len(self.records)
        record = self.records[index % n]
        item = {"content": _text([record["content"]], index // n)}
        if record.get("tags"):
            item["tags"] = record["tags"]
        if record.get("created_at"):
            item["created_at"] = record["created_at"]
        return item

    def _vector(self, index: int) -> np.ndarray:
        base = index % len(self.records)
        cached = self.cached
        if index < len(self.records) and base < len(cached):
            return cached[base]
        self.variant_rows += 1
        return variant_vector(cached[base % len(cached)], index)


def variant_vector(base: np.ndarray, index: int) -> np.ndarray:
    """`base` moved by deterministic noise to cosine ~VARIANT_COSINE, renormalized."""
    rng = np.random.default_rng(index)
    noise = rng.standard_normal(base.shape[0]).astype(np.float32)
    noise -= noise.dot(base) * base
    noise /= np.linalg.norm(noise)
    angle = np.arccos(VARIANT_COSINE)
    return (np.cos(angle) * base + np.sin(angle) * noise).astype(np.float32)


def _read_records(source: Path) -> list[dict]:
    plain, packed = source / "memories.jsonl", source / "memories.jsonl.gz"
    if plain.exists():
        return list(read_jsonl(plain))
    if packed.exists():
        with gzip.open(packed, "rt", encoding="utf-8") as handle:
            return [json.loads(line) for line in handle if line.strip()]
    raise CommandError(f"{source} has no memories.jsonl(.gz)")


def _read_texts(source: Path) -> list[str]:
    return [r["content"] for r in _read_records(source)]


def _cached_vectors(texts: list[str], cache: Path) -> np.ndarray:
    """The longest prefix of `texts` whose vectors the cache holds."""
    have = 0
    while vector_cache.chunk_path(cache, have).exists():
        have += vector_cache.CHUNK
    have = min(have, len(texts))
    while have > 0:
        found = vector_cache.load(texts[:have], cache)
        if found is not None:
            return found
        have -= vector_cache.CHUNK
    raise CommandError(f"{cache} holds no vectors of these texts; run --prepare-vectors first")


def _sizes() -> dict:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_database_size(current_database()), pg_total_relation_size(%s), "
            "pg_relation_size(%s)",
            [retrieve.MEMORY, HNSW_INDEX],
        )
        database, table, hnsw = cursor.fetchone()
    mb = 1024 * 1024
    return {
        "db_mb": round(database / mb),
        "table_mb": round(table / mb),
        "hnsw_mb": round(hnsw / mb),
        **postgres_memory(),
    }


def postgres_memory() -> dict:
    """Resident memory of the PostgreSQL server: the postmaster's and its children's RSS
    summed, and their PSS (shared buffers counted once), from /proc."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]
    try:
        parent = int(Path(f"/proc/{backend}/stat").read_text().rsplit(")", 1)[1].split()[1])
        pids = [parent] + [
            int(p) for p in os.listdir("/proc") if p.isdigit() and _ppid(int(p)) == parent
        ]
        rss = pss = 0
        for pid in pids:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Rss:"):
                    rss += int(line.split()[1])
                elif line.startswith("Pss:"):
                    pss += int(line.split()[1])
    except OSError:
        return {}
    return {
        "pg_processes": len(pids),
        "pg_rss_mb": round(rss / 1024),
        "pg_pss_mb": round(pss / 1024),
    }


def _ppid(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return -1


def _table_rows() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM memories_memory")
        return cursor.fetchone()[0]


def _build_index() -> float:
    start = time.perf_counter()
    with connection.cursor() as cursor:
        # The graph of 1M halfvec(384) rows takes ~1.2 GB; a build whose graph outgrows
        # maintenance_work_mem goes on much more slowly.
        cursor.execute("SET maintenance_work_mem = '2GB'")
        cursor.execute("SET max_parallel_maintenance_workers = 1")
        cursor.execute(HNSW_SQL)
        cursor.execute("RESET maintenance_work_mem")
        cursor.execute("RESET max_parallel_maintenance_workers")
    return round(time.perf_counter() - start, 1)


class _Measuring:
    """Context for a timed phase: takes the machine's measuring lock (if given) and runs this
    process and its PostgreSQL backend at nice 0 meanwhile; yields a function returning the
    conditions (load average, when) to record with the figures."""

    def __init__(self, lock: Path | None):
        self.lock = lock
        self.handle = None

    def __enter__(self):
        import fcntl

        if self.lock:
            self.handle = self.lock.open("a")
            fcntl.flock(self.handle, fcntl.LOCK_EX)
            self._nice(0)
        started = time.strftime("%H:%M:%S", time.gmtime())
        load = os.getloadavg()[0]

        def conditions() -> dict:
            return {
                "measured_at_utc": started,
                "load_before": round(load, 2),
                "load_after": round(os.getloadavg()[0], 2),
                "locked": bool(self.lock),
            }

        return conditions

    def __exit__(self, *exc):
        import fcntl

        if self.handle:
            self._nice(19)
            fcntl.flock(self.handle, fcntl.LOCK_UN)
            self.handle.close()
            self.handle = None
        return False

    @staticmethod
    def _nice(value: int) -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            backend = cursor.fetchone()[0]
        # nice is per thread on Linux: every thread of this process (the encoder's too).
        threads = [int(t) for t in os.listdir(f"/proc/{os.getpid()}/task")]
        for pid in [*threads, backend]:
            with contextlib.suppress(OSError):
                os.setpriority(os.PRIO_PROCESS, pid, value)


def _reindex() -> dict:
    """Build the HNSW index over the whole table again, timed (what a bulk import pays). Also
    the way back when a --bulk run was interrupted between dropping and building it."""
    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX IF EXISTS {HNSW_INDEX}")
        cursor.execute("SELECT count(*) FROM memories_memory WHERE embedding IS NOT NULL")
        rows = cursor.fetchone()[0]
    return {"rows": rows, "build_s": _build_index(), **_sizes()}


def _ann_recall(namespace, questions: list[str]) -> float:
    """Share of the exact top 10 that the HNSW scan finds, at the ef_search search() uses for
    this namespace size (docs/benchmarks.md has the measurement that chose it)."""
    scope = Scope(namespace_id=namespace.id)
    size = retrieve.namespace_size(namespace.id)
    ef = retrieve.ef_search_for(size, POOL, search_settings().hnsw_ef_search)
    found = total = 0
    for q in questions:
        literal = nearest.vector_literal(embed_query(q))
        ann = {i for i, _ in retrieve.hnsw_nearest(scope, literal, 10, ef)}
        exact = {i for i, _ in retrieve.exact_nearest(scope, literal, 10)}
        found += len(ann & exact)
        total += len(exact)
    return round(found / max(total, 1), 3)


def _text(texts: list[str], index: int) -> str:
    base = texts[index % len(texts)]
    return base if index < len(texts) else f"{base} (#{index // len(texts)})"


def format_rows(rows: list[dict]) -> str:
    lines = [
        "| memories | encoder alone / s | ingest / s (model) | ingest / s (cached vectors) "
        "| search p50 ms | p95 ms "
        "| p99 ms | tag-filter p95 ms | DB MB | table MB | HNSW MB | PG RSS / PSS MB "
        "| ANN recall@10 |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['size']:,} | {r.get('encoder_per_s', '')} | {r.get('ingest_per_s', '')} "
            f"| {r.get('ingest_cached_vectors_per_s', '')} | {r['p50_ms']} | {r['p95_ms']} "
            f"| {r['p99_ms']} | {r.get('tag_p95_ms', '')} | {r['db_mb']} | {r['table_mb']} "
            f"| {r['hnsw_mb']} | {r.get('pg_rss_mb', '')} / {r.get('pg_pss_mb', '')} "
            f"| {r['ann_recall@10']} |"
        )
    return "\n".join(lines)
