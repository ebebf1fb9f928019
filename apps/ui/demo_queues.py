"""What the demo namespace needs so its stale and missed-searches queues are not empty.

Searches an assistant might have made that the demo cannot answer (they land in the
missed-searches queue, grouped by meaning), and one scratch note left lying for a while (the
stale queue; the old conversation turns are there already, unused since 2023).
"""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from apps.memories import services
from apps.memories.models import Memory, Namespace
from apps.search import querylog
from apps.search.services import search

MISSED_QUESTIONS = [
    "What is the guest wifi password in the office?",
    "office wifi password for guests",
    "Who is on call this weekend?",
    "How do I rotate the API signing keys?",
]


def seed_queues(namespace: Namespace) -> None:
    note = services.memory_create(
        namespace=namespace,
        content="Scratch: try a bigger connection pool for the importer (untested).",
        tier="scratch",
        door="cli",
    ).memory
    Memory.objects.filter(pk=note.pk).update(created_at=timezone.now() - timedelta(days=30))
    for question in MISSED_QUESTIONS:
        search(namespace=namespace, query=question)
    querylog.flush()
