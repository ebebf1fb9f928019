"""What the demo namespace needs so its graph and analytics pages are not empty.

Graph: the conversation turns that answer the same benchmark question are linked `relates_to`
(locomo-dev's relevance lists: a curator who found them together would link them), plus a few
links among the project memories, all through the link service (revisions), then PageRank.

Analytics: real searches through the search service, the benchmark's own questions for this
conversation and a few project questions, with feedback from the relevance lists (a result is
useful when the benchmark names it). The searches then get dates spread over the last two weeks
(the only thing not done by the real path: a demo made in one minute has no history).
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from django.utils import timezone

from apps.jobs.models import Job
from apps.jobs.services import job_execute
from apps.memories import services
from apps.memories.models import Memory, Namespace
from apps.search import querylog, rollup
from apps.search.feedback import feedback_record
from apps.search.models import QueryLog
from apps.search.services import search

QUESTIONS = 24
LINKED_QUESTIONS = 40
SPREAD_DAYS = 14
PROJECT_QUESTIONS = [
    ("where are sessions stored", ["Sessions live in Postgres now"]),
    ("session cache redis ttl", ["Use Redis for the session cache"]),
    ("when can I run migrations", ["Never run migrations during the import window"]),
    ("are embeddings normalised", ["Embeddings are normalised"]),
    ("where are sessions stored", ["Sessions live in Postgres now"]),
    ("cache invalidation after a write", ["Cache invalidation on write"]),
]
PROJECT_LINKS = [
    ("Operations handbook", "Never run migrations during the import window", "depends_on"),
    ("Sessions live in Postgres now", "Use Redis for the session cache", "supersedes"),
    ("Cache invalidation on write", "Embeddings are normalised", "relates_to"),
]


def seed_insights(namespace: Namespace, source: Path, conversation: str) -> dict:
    questions = _questions(source / "queries.jsonl", conversation)
    by_external = dict(
        Memory.objects.filter(namespace=namespace, external_id__isnull=False).values_list(
            "external_id", "pk"
        )
    )
    links = _link_conversation(namespace, questions[:LINKED_QUESTIONS], by_external)
    links += _link_project(namespace)
    job_execute(Job.PAGERANK, namespace_id=namespace.pk, trigger="command")
    asked = [(q["query"], q["relevant"]) for q in questions[:QUESTIONS]]
    asked += [(text, titles) for text, titles in PROJECT_QUESTIONS]
    searches = _search(namespace, asked, by_external)
    return {"links": links, "searches": searches}


def _questions(path: Path, conversation: str) -> list[dict]:
    if not path.exists():
        return []
    rows = (json.loads(line) for line in path.open(encoding="utf-8") if line.strip())
    return [row for row in rows if row.get("namespace") == conversation]


def _link_conversation(namespace: Namespace, questions: list[dict], by_external: dict) -> int:
    memories = Memory.objects.in_bulk(list(by_external.values()))
    made = 0
    for question in questions:
        ids = [by_external[r] for r in question.get("relevant", []) if r in by_external]
        for source, target in zip(ids, ids[1:], strict=False):
            if source != target:
                services.edge_create(
                    source=memories[source],
                    target=memories[target],
                    relation="relates_to",
                    door="cli",
                )
                made += 1
    return made


def _link_project(namespace: Namespace) -> int:
    made = 0
    for source, target, relation in PROJECT_LINKS:
        a = Memory.objects.filter(namespace=namespace, title=source).order_by("created_at").first()
        b = Memory.objects.filter(namespace=namespace, title=target).first()
        if a and b:
            services.edge_create(source=a, target=b, relation=relation, door="cli")
            made += 1
    return made


def _search(namespace: Namespace, asked: list[tuple[str, list[str]]], by_external: dict) -> int:
    titles = dict(
        Memory.objects.filter(namespace=namespace).exclude(title="").values_list("title", "pk")
    )
    ids = []
    for text, relevant in asked:
        response = search(namespace=namespace, query=text, limit=5)
        querylog.flush()
        ids.append(response.query_log_id)
        wanted = {str(by_external.get(r) or titles.get(r)) for r in relevant}
        verdicts = {m["id"]: m["id"] in wanted for m in response.memories}
        if verdicts and response.query_log_id:
            feedback_record(
                query_log_id=response.query_log_id,
                namespace=namespace,
                was_useful=any(verdicts.values()),
                result_feedback=verdicts,
            )
    now = timezone.now()
    for i, pk in enumerate(reversed([pk for pk in ids if pk])):
        when = now - timedelta(days=(i * SPREAD_DAYS) // max(len(ids), 1), minutes=7 * i)
        QueryLog.objects.filter(pk=pk).update(created_at=when)
    rollup.forget(namespace_id=namespace.pk)  # the searches' days changed
    return len(ids)
