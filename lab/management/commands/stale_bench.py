"""python manage.py stale_bench [--size 100000] [--logs 100000] [--repeat 5] [--duplicate-job]

Server time of the curator's queues (near-duplicates, conflicts, stale, missed searches) on a
namespace of SIZE memories and LOGS search-log rows ("stale-bench", kept between runs). The
rows are inserted directly: stabilities, tiers, creation and last-use dates spread over 400
days, and searches of which about one in five missed, over 2,025 distinct query texts. Pages
are requested in-process through Django's test client (the whole middleware, view and template
stack) with the navigation counts' cache cleared before each request, so every figure includes
the four counts. The missed page's "first request" is the first in this process (nothing
cached in memory); it groups queries with the vectors stored when they missed.

For the near-duplicates and conflicts queues the memories get embeddings: BASES real texts from
../shared/benchmarks/scale-413k are embedded with the real model, and every memory gets one of
those vectors plus Gaussian noise (cosine about 0.9 to the other memories of its base), one in
DUPLICATE_EVERY a near-copy of its neighbour (cosine about 0.98); embedding 100,000 texts takes
over an hour on this shared machine, which is why they are synthesised. About one search in
fifty carries a contradiction flag between two memories, and CONFLICT_LINKS pairs are linked
`contradicts`. With --duplicate-job the near_duplicates job runs over the namespace (timed) and
fills the near-duplicates queue. The missed queries' vectors are stored as the searches that
missed would have stored them (setup, not timed).
"""

from __future__ import annotations

import hashlib
import random
import statistics
import time
import uuid
from datetime import timedelta

import numpy as np
from django.conf import settings
from django.core.cache import cache
from django.core.management.base import BaseCommand, CommandError
from django.test import Client
from django.utils import timezone

from apps.memories import services
from apps.memories.models import CausalEdge, Memory, Tier
from apps.queues.jobs import near_duplicates_update
from apps.queues.selectors import conflict_count, duplicate_count
from apps.search.models import MissedQueryVector, QueryLog
from apps.vectors.embeddings import embed_texts
from lab.pages import logged_in_client

from .ui_bench import DEFAULT_SOURCE, _records

USER = "stale-bench"
TOPICS = ["deploy", "backup", "wifi", "billing", "oncall", "release", "cache", "login", "vpn"]
ASKS = ["how do I", "where is the", "who owns the", "what is the", "when do we"]
BASES = 1000
DUPLICATE_EVERY = 200
CONFLICT_LINKS = 200


class Command(BaseCommand):
    help = "Time the stale and missed-searches queue pages (docs/benchmarks.md)."

    def add_arguments(self, parser):
        parser.add_argument("--size", type=int, default=100_000)
        parser.add_argument("--logs", type=int, default=100_000)
        parser.add_argument("--namespace", default="stale-bench")
        parser.add_argument("--repeat", type=int, default=5)
        parser.add_argument(
            "--duplicate-job",
            action="store_true",
            help="Run (and time) the near_duplicates job over the namespace first.",
        )

    def handle(
        self, *args, size: int, logs: int, namespace: str, repeat: int, duplicate_job, **options
    ):
        settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
        ns = services.namespace_get_or_create(name=namespace)
        rng = random.Random(7)
        self._memories(ns, size, rng)
        self._logs(ns, logs, rng)
        self._embeddings(ns, rng)
        self._conflicts(ns, rng)
        self._missed_vectors(ns)
        if duplicate_job:
            self._duplicate_job(ns)
        client = logged_in_client(USER)
        pages = [
            ("near-duplicates queue", f"/ns/{ns.name}/queues/duplicates/"),
            ("near-duplicates queue, page 5", f"/ns/{ns.name}/queues/duplicates/?page=5"),
            ("conflicts queue", f"/ns/{ns.name}/queues/conflicts/"),
            ("stale queue (all reasons)", f"/ns/{ns.name}/queues/stale/"),
            ("stale queue (unused, page 2)", None),
            ("missed searches (first request)", f"/ns/{ns.name}/queues/missed/"),
            ("missed searches (again)", f"/ns/{ns.name}/queues/missed/"),
            ("browse page with the nav counts", f"/ns/{ns.name}/memories/"),
        ]
        rows = []
        for name, url in pages:
            if url is None:
                url = self._second_page(client, ns)
            times = self._time(
                client, url, 1 if "first" in name else repeat, warm="first" not in name
            )
            rows.append((name, statistics.median(times), max(times)))
        memories = Memory.objects.filter(namespace=ns).count()
        searches = QueryLog.objects.filter(namespace=ns).count()
        pairs = duplicate_count(namespace=ns)
        conflicts = conflict_count(namespace=ns)
        self.stdout.write(
            f"\nnamespace {namespace}: {memories} memories, {searches} searches, "
            f"{pairs} open near-duplicate pairs, {conflicts} open conflicts\n"
        )
        self.stdout.write("| page | median ms | worst ms |\n|---|---:|---:|")
        for name, median, worst in rows:
            self.stdout.write(f"| {name} | {median:.1f} | {worst:.1f} |")

    def _memories(self, ns, size: int, rng: random.Random) -> None:
        have = Memory.objects.filter(namespace=ns).count()
        now = timezone.now()
        tiers = [Tier.NORMAL] * 6 + [Tier.SCRATCH] * 2 + [Tier.CORE, Tier.CONSTITUTIONAL]
        while have < size:
            batch = []
            for i in range(have, min(size, have + 5000)):
                content = f"Bench note {i} about the {rng.choice(TOPICS)} process."
                created = now - timedelta(days=rng.uniform(0, 400))
                used = created + timedelta(days=rng.uniform(0, 400)) if rng.random() < 0.6 else None
                batch.append(
                    Memory(
                        id=uuid.uuid4(),
                        namespace=ns,
                        content=content,
                        tier=rng.choice(tiers),
                        stability=round(rng.random(), 4),
                        created_at=created,
                        updated_at=created,
                        last_accessed_at=min(used, now) if used else None,
                        content_hash=hashlib.sha256(content.encode()).hexdigest(),
                    )
                )
            Memory.objects.bulk_create(batch, batch_size=5000)
            have += len(batch)

    def _logs(self, ns, logs: int, rng: random.Random) -> None:
        have = QueryLog.objects.filter(namespace=ns).count()
        texts = [f"{a} {t} {n}" for a in ASKS for t in TOPICS for n in range(45)]
        now = timezone.now()
        while have < logs:
            count = min(5000, logs - have)
            batch = []
            for _ in range(count):
                missed = rng.random() < 0.2
                batch.append(
                    QueryLog(
                        namespace=ns,
                        query=rng.choice(texts),
                        evidence_gap=missed,
                        results=[] if missed else [{"id": str(uuid.uuid4()), "score": 0.9}],
                    )
                )
            created = QueryLog.objects.bulk_create(batch, batch_size=5000)
            for row in created:  # auto_now_add: spread the dates afterwards
                row.created_at = now - timedelta(days=rng.uniform(0, 120))
            QueryLog.objects.bulk_update(created, ["created_at"], batch_size=5000)
            have += count

    def _embeddings(self, ns, rng: random.Random) -> None:
        """Synthetic vectors around BASES real embeddings (see the module docstring)."""
        missing = Memory.objects.filter(namespace=ns, embedding__isnull=True)
        total = missing.count()
        if not total:
            return
        texts = [r["content"] for r in _records(DEFAULT_SOURCE, min(BASES, max(10, total // 100)))]
        self.stderr.write(f"embedding {len(texts)} base texts ...")
        bases = embed_texts(texts)
        noise = np.random.default_rng(7)
        done, started = 0, time.perf_counter()
        while True:
            ids = list(missing.order_by("id").values_list("id", flat=True)[:2000])
            if not ids:
                break
            picks = noise.integers(0, len(bases), size=len(ids))
            vectors = bases[picks] + noise.normal(0, 0.017, size=(len(ids), bases.shape[1]))
            for i in range(1, len(ids), DUPLICATE_EVERY):  # a near-copy of its neighbour
                vectors[i] = vectors[i - 1] + noise.normal(0, 0.004, size=bases.shape[1])
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            rows = [Memory(id=pk, embedding=v) for pk, v in zip(ids, vectors, strict=True)]
            Memory.objects.bulk_update(rows, ["embedding"], batch_size=500)
            done += len(ids)
            rate = done / (time.perf_counter() - started)
            self.stderr.write(f"embeddings {done}/{total} ({rate:.0f}/s)")

    def _conflicts(self, ns, rng: random.Random) -> None:
        """Contradiction flags on about one search in fifty, and CONFLICT_LINKS links."""
        flagged = QueryLog.objects.filter(namespace=ns).exclude(contradictions=[])
        if flagged.exists():
            return
        ids = list(Memory.objects.filter(namespace=ns).values_list("id", flat=True)[:20_000])
        pool = [(str(a), str(b)) for a, b in zip(ids[0::2], ids[1::2], strict=False)][:3000]
        logs = list(QueryLog.objects.filter(namespace=ns).only("id"))
        chosen = rng.sample(logs, len(logs) // 50)
        for log in chosen:
            log.contradictions = [list(rng.choice(pool))]
        QueryLog.objects.bulk_update(chosen, ["contradictions"], batch_size=2000)
        edges = [
            CausalEdge(namespace=ns, source_id=a, target_id=b, relation="contradicts")
            for a, b in rng.sample(pool, min(CONFLICT_LINKS, len(pool) // 2))
        ]
        CausalEdge.objects.bulk_create(edges, ignore_conflicts=True)
        self.stderr.write(f"{len(chosen)} flagged searches, {len(edges)} contradicts links")

    def _missed_vectors(self, ns) -> None:
        """The vectors a missed search stores (querylog), for the bench's query texts."""
        have = set(
            MissedQueryVector.objects.filter(namespace=ns).values_list("query_key", flat=True)
        )
        texts = [f"{a} {t} {n}" for a in ASKS for t in TOPICS for n in range(45)]
        todo = [t for t in texts if t.lower() not in have]
        if todo:
            self.stderr.write(f"embedding {len(todo)} missed query texts ...")
            vectors = embed_texts(todo)
            MissedQueryVector.objects.bulk_create(
                [
                    MissedQueryVector(namespace=ns, query_key=t.lower(), embedding=v)
                    for t, v in zip(todo, vectors, strict=True)
                ],
                ignore_conflicts=True,
            )

    def _duplicate_job(self, ns) -> None:
        count = Memory.objects.filter(namespace=ns, embedding__isnull=False).count()
        started = time.perf_counter()
        result = near_duplicates_update(ns)
        seconds = time.perf_counter() - started
        self.stdout.write(
            f"near_duplicates job over {count} memories: {seconds:.1f} s "
            f"({count / seconds:.0f} memories/s), {result}"
        )

    def _second_page(self, client: Client, ns) -> str:
        html = client.get(f"/ns/{ns.name}/queues/stale/?reason=unused").content.decode()
        marker = "reason=unused&cursor="
        if marker not in html:
            raise CommandError("the unused list has no second page")
        cursor = html.split(marker, 1)[1].split('"', 1)[0]
        return f"/ns/{ns.name}/queues/stale/?{marker}{cursor}"

    def _time(self, client: Client, url: str, repeat: int, *, warm: bool) -> list[float]:
        if warm:
            cache.clear()
            client.get(url)
        times = []
        for _ in range(repeat):
            cache.clear()
            start = time.perf_counter()
            response = client.get(url)
            times.append((time.perf_counter() - start) * 1000)
            if response.status_code != 200:
                raise CommandError(f"{url} answered {response.status_code}")
        return times
