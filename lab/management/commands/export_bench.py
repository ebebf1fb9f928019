"""python manage.py export_bench [--size 100000] [--write-path 1000] [--cookie]

Grows a namespace ("export-bench") for measuring the streamed export: WRITE_PATH memories of
../shared/benchmarks/scale-413k through memory_batch_create, topped up to SIZE with copies of
those rows (ui_bench's --write-path-only filler: new ids, text with a copy suffix, same
embedding, tags and dates), plus one relates_to link per 100 memories. Kept between runs.

With --cookie it prints a session cookie of a superuser ("export-bench"), so a client such as
curl can download /ns/export-bench/export.jsonl from a running server (docs/benchmarks.md).
"""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth import get_user_model
from django.contrib.sessions.backends.db import SessionStore
from django.core.management.base import BaseCommand

from apps.memories import services
from apps.memories.models import CausalEdge, Memory

from .ui_bench import BATCH, DEFAULT_SOURCE, _copy_rows, _records


class Command(BaseCommand):
    help = "Grow a large namespace for the streamed-export measurement (docs/benchmarks.md)."

    def add_arguments(self, parser):
        parser.add_argument("--size", type=int, default=100_000)
        parser.add_argument("--write-path", type=int, default=1_000)
        parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
        parser.add_argument("--namespace", default="export-bench")
        parser.add_argument("--cookie", action="store_true", help="Print a session cookie")

    def handle(self, *args, size, write_path, source, namespace, cookie, **options):
        ns = services.namespace_get_or_create(name=namespace)
        have = Memory.objects.filter(namespace=ns).count()
        if have < write_path:
            records = _records(source, write_path)
            for start in range(have, write_path, BATCH):
                chunk = records[start : min(start + BATCH, write_path)]
                items = [
                    {
                        "content": r["content"],
                        "tags": r.get("tags", []),
                        "created_at": r.get("created_at"),
                        "metadata": r.get("metadata") or {},
                    }
                    for r in chunk
                ]
                services.memory_batch_create(
                    namespace=ns,
                    items=items,
                    dedupe=False,
                    check_near_duplicates=False,
                    chunk=False,
                    infer=False,
                    door="cli",
                )
                self.stderr.write(f"{start + len(chunk)} through the write path")
        copied = _copy_rows(ns, size)
        if copied:
            self.stderr.write(f"{copied} copies added")
        if not CausalEdge.objects.filter(namespace=ns).exists():
            ids = list(
                Memory.objects.filter(namespace=ns).order_by("id").values_list("id", flat=True)
            )
            edges = [
                CausalEdge(
                    namespace=ns, source_id=ids[i], target_id=ids[i + 1], relation="relates_to"
                )
                for i in range(0, len(ids) - 1, 100)
            ]
            CausalEdge.objects.bulk_create(edges, batch_size=2000, ignore_conflicts=True)
        total = Memory.objects.filter(namespace=ns).count()
        edges = CausalEdge.objects.filter(namespace=ns).count()
        self.stdout.write(f"{namespace}: {total} memories, {edges} links")
        if cookie:
            users = get_user_model().objects
            user = users.filter(username="export-bench").first()
            if user is None:
                user = users.create_superuser("export-bench", "", None)
            session = SessionStore()
            session["_auth_user_id"] = str(user.pk)
            session["_auth_user_backend"] = "django.contrib.auth.backends.ModelBackend"
            session["_auth_user_hash"] = user.get_session_auth_hash()
            session.create()
            self.stdout.write(f"sessionid={session.session_key}")
