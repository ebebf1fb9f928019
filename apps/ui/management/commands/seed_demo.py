"""Load a small demo namespace so a newcomer sees a populated UI (`make demo`).

One LoCoMo conversation (../shared/benchmarks/locomo-dev) plus a handful of project memories
(decisions, a warning, a linked pair, a contradiction, a long chunked document), all through the
real write path; links, searches and feedback for the graph and analytics pages (demo_insights).
Superusers become owners of the namespace when the membership model exists.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from apps.memories import services
from apps.memories.models import Memory

from ...demo import PROJECT_MEMORIES, grant_owners, long_document, seed_decision_chain
from ...demo_insights import seed_insights
from ...demo_queues import seed_queues

DEFAULT_SOURCE = settings.BASE_DIR.parent / "shared" / "benchmarks" / "locomo-dev"


class Command(BaseCommand):
    help = "Create the 'demo' namespace from one locomo-dev conversation and a few examples."

    def add_arguments(self, parser):
        parser.add_argument("--namespace", default="demo")
        parser.add_argument("--source", default=str(DEFAULT_SOURCE))
        parser.add_argument("--conversation", default="conv-26")

    def handle(self, *args, namespace: str, source: str, conversation: str, **options):
        ns = services.namespace_get_or_create(name=namespace)
        if Memory.objects.filter(namespace=ns).exists():
            self.stdout.write(f"Namespace '{namespace}' already has memories; left as it is.")
        else:
            path = Path(source) / "memories.jsonl"
            if not path.exists():
                raise CommandError(f"{path} not found (pass --source DIR).")
            items = []
            for line in path.open():
                record = json.loads(line)
                if record.get("namespace") != conversation:
                    continue
                record.pop("namespace", None)
                record["category"] = "conversation"
                record["source"] = f"locomo {conversation}"
                items.append(record)
            results = services.memory_batch_create(
                namespace=ns, items=items, check_near_duplicates=False, door="cli"
            )
            created = {}
            for item in PROJECT_MEMORIES:
                result = services.memory_create(namespace=ns, door="cli", **item)
                created[item["title"]] = result.memory
            services.memory_create(
                namespace=ns,
                title="Operations handbook",
                content=long_document(),
                category="pattern",
                file_path="docs/handbook.md",
                tags=["ops", "handbook"],
                door="cli",
            )
            services.edge_create(
                source=created["Cache invalidation on write"],
                target=created["Use Redis for the session cache"],
                relation="depends_on",
                door="cli",
            )
            services.edge_create(
                source=created["Sessions live in Postgres now"],
                target=created["Use Redis for the session cache"],
                relation="contradicts",
                door="cli",
            )
            seed_decision_chain(ns)  # incident -> decision -> follow-up, for "why" questions
            seed_queues(ns)  # a scratch note and a few searches the demo cannot answer
            # links and PageRank for the graph, answered searches with feedback for analytics
            insights = seed_insights(ns, Path(source), conversation)
            self.stdout.write(
                self.style.SUCCESS(
                    f"Namespace '{namespace}': {len(results)} conversation turns and "
                    f"{len(PROJECT_MEMORIES) + 3} project memories, {insights['links']} links, "
                    f"{insights['searches']} searches with feedback."
                )
            )
        owners = grant_owners(ns, get_user_model().objects.filter(is_superuser=True))
        if owners:
            self.stdout.write(f"Owners: {', '.join(owners)}")
