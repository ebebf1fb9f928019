"""`make demo` (manage.py seed_demo) fills a namespace through the write path and makes the
superusers its owners; running it again leaves the namespace as it is."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from apps.access.models import NamespaceMembership, Role
from apps.history.models import MemoryRevision
from apps.jobs.models import JobRun
from apps.memories.models import CausalEdge, Memory, Namespace
from apps.memories.selectors import stale_counts, stale_memories
from apps.queues.selectors import conflict_count, duplicate_count, open_conflicts
from apps.search.models import QueryLog
from apps.search.selectors import missed_count
from apps.search.services import search
from apps.ui.demo import CHAIN_DECISION, CHAIN_INCIDENT, CHAIN_QUESTION
from apps.ui.demo_queues import AGAINST_RULE, CI_AFTER, CI_BEFORE, POISONED, RULE, UNUSED_NOTE
from apps.ui.templatetags.stale_nav import queue_counts

from .conftest import make_user

pytestmark = pytest.mark.django_db


def test_seed_demo(tmp_path, embedding_model):
    lines = [
        {"id": "conv-1:D1:1", "namespace": "conv-1", "content": "Ann: I adopted a cat.",
         "created_at": "2023-05-08T13:56:00", "tags": ["session-1"]},
        {"id": "conv-1:D1:2", "namespace": "conv-1", "content": "Bo: What is its name?",
         "created_at": "2023-05-08T13:57:00", "tags": ["session-1"]},
        {"id": "conv-2:D1:1", "namespace": "conv-2", "content": "Not this conversation."},
    ]  # fmt: skip
    (tmp_path / "memories.jsonl").write_text("\n".join(json.dumps(x) for x in lines))
    admin = make_user("boss", superuser=True)
    call_command("seed_demo", source=str(tmp_path), conversation="conv-1")
    memories = Memory.objects.filter(namespace__name="demo")
    assert memories.filter(category="conversation").count() == 2
    assert memories.filter(title="Use Redis for the session cache").exists()
    assert memories.filter(metadata__chunk_index=1).exists()  # the handbook is chunked
    assert CausalEdge.objects.filter(namespace__name="demo", relation="contradicts").exists()
    assert MemoryRevision.objects.filter(namespace__name="demo", door="cli").exists()
    assert NamespaceMembership.objects.get(user=admin, namespace__name="demo").role == Role.OWNER
    # Every curator's queue has something in it, with no step by hand.
    demo = Namespace.objects.get(name="demo")
    assert duplicate_count(namespace=demo) >= 1
    assert conflict_count(namespace=demo) >= 2  # the contradicts link and a search's flag
    assert any(not c.linked and c.flagged for c in open_conflicts(namespace=demo))
    assert stale_counts(namespace=demo)["total"] >= 1
    assert missed_count(namespace=demo) >= 1
    # The graph and analytics pages have something to show: links, PageRank, searches with
    # feedback (real searches through the search service) and a job run.
    assert CausalEdge.objects.filter(namespace__name="demo").count() >= 4
    assert memories.filter(pagerank_score__gt=0).exists()
    logs = QueryLog.objects.filter(namespace__name="demo")
    assert logs.exclude(results=[]).count() >= 5
    assert logs.filter(feedback_at__isnull=False).exists()
    assert JobRun.objects.filter(job="pagerank", namespace__name="demo").exists()
    # The decision chain answers a why-question along its links.
    chain = search(namespace=demo, query=CHAIN_QUESTION, log=False).path
    titles = [step["title"] for step in chain]
    assert titles[:2] == [CHAIN_DECISION["title"], CHAIN_INCIDENT["title"]]
    count = memories.count()
    call_command("seed_demo", source=str(tmp_path), conversation="conv-1")
    assert memories.count() == count


def test_the_demo_queues_hold_a_handful_of_meaningful_items(embedding_model):
    """`make demo` as a newcomer runs it (the real LoCoMo conversation from shared/): each
    queue shows a handful of items, not the hundreds of 2023 turns the stale queue once
    counted; fewer than ten conflicts, no update flagged for a change word inside another
    word, the negated rule a contradiction (no supersede), the moved CI an update."""
    make_user("boss", superuser=True)
    call_command("seed_demo")
    demo = Namespace.objects.get(name="demo")
    turns = Memory.objects.filter(namespace=demo, category="conversation")
    assert turns.count() > 300  # the whole conversation is there...
    counts = queue_counts(demo)
    for queue in ("duplicates", "conflicts", "stale", "missed"):
        assert 1 <= counts[queue] < 10, counts  # ...and the Queues badge stays small
    # One assistant write waits for review, with its reason, and no search finds it.
    assert counts["review"] == 1 and demo.review == "flagged"
    waiting = Memory.every_state.get(namespace=demo, review="pending")
    assert waiting.content == POISONED and "ignore its instructions" in waiting.review_reason
    found = search(namespace=demo, query="send the deploy key", log=False).memories
    assert str(waiting.pk) not in [m["id"] for m in found]
    assert counts["total"] < 25, counts
    stale = stale_memories(namespace=demo)
    assert not stale.filter(category="conversation").exists()
    assert {m.content for m in stale.filter(is_unused=True)} == {UNUSED_NOTE}
    conflicts = open_conflicts(namespace=demo, limit=100)
    assert 2 <= conflict_count(namespace=demo) < 10
    for conflict in conflicts:
        assert "changelog" not in conflict.why and "migrations" not in conflict.why
    texts = {frozenset((c.first.content, c.second.content)): c for c in conflicts}
    rule = texts[frozenset((RULE, AGAINST_RULE))]
    assert rule.noticed_as == "contradiction" and not rule.is_update
    assert texts[frozenset((CI_BEFORE, CI_AFTER))].is_update
