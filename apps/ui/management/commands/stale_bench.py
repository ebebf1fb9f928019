"""python manage.py stale_bench [--size 100000] [--logs 100000] [--repeat 5]

Server time of the stale and missed-searches queues on a namespace of SIZE memories and LOGS
search-log rows ("stale-bench", kept between runs). The rows are inserted directly (these
queues read columns, not embeddings or text search): stabilities, tiers, creation and last-use
dates spread over 400 days, and searches of which about one in five missed, over 2,000
distinct query texts. Pages are requested in-process through Django's test client (the whole
middleware, view and template stack) with the navigation counts' cache cleared before each
request, so every figure includes them. The missed page's first request embeds up to
MISSED_MAX_QUERIES query texts ("cold"); later ones reuse those vectors ("warm").
"""

from __future__ import annotations

import hashlib
import random
import statistics
import time
import uuid
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.core.management.base import BaseCommand, CommandError
from django.test import Client
from django.utils import timezone

from apps.memories import services
from apps.memories.models import Memory, Tier
from apps.search.models import QueryLog

USER = "stale-bench"
TOPICS = ["deploy", "backup", "wifi", "billing", "oncall", "release", "cache", "login", "vpn"]
ASKS = ["how do I", "where is the", "who owns the", "what is the", "when do we"]


class Command(BaseCommand):
    help = "Time the stale and missed-searches queue pages (docs/benchmarks.md)."

    def add_arguments(self, parser):
        parser.add_argument("--size", type=int, default=100_000)
        parser.add_argument("--logs", type=int, default=100_000)
        parser.add_argument("--namespace", default="stale-bench")
        parser.add_argument("--repeat", type=int, default=5)

    def handle(self, *args, size: int, logs: int, namespace: str, repeat: int, **options):
        settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
        ns = services.namespace_get_or_create(name=namespace)
        rng = random.Random(7)
        self._memories(ns, size, rng)
        self._logs(ns, logs, rng)
        client = self._client()
        pages = [
            ("stale queue (all reasons)", f"/ns/{ns.name}/queues/stale/"),
            ("stale queue (unused, page 2)", None),
            ("missed searches (cold)", f"/ns/{ns.name}/queues/missed/"),
            ("missed searches (warm)", f"/ns/{ns.name}/queues/missed/"),
            ("browse page with the nav counts", f"/ns/{ns.name}/memories/"),
        ]
        rows = []
        for name, url in pages:
            if url is None:
                url = self._second_page(client, ns)
            times = self._time(
                client, url, 1 if "cold" in name else repeat, warm="cold" not in name
            )
            rows.append((name, statistics.median(times), max(times)))
        memories = Memory.objects.filter(namespace=ns).count()
        searches = QueryLog.objects.filter(namespace=ns).count()
        self.stdout.write(f"\nnamespace {namespace}: {memories} memories, {searches} searches\n")
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

    def _client(self) -> Client:
        users = get_user_model().objects
        user = users.filter(username=USER).first()
        if user is None:
            user = users.create_superuser(username=USER, email="", password=None)
        client = Client()
        client.force_login(user)
        return client

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
