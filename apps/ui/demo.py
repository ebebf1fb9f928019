"""Content of the demo namespace (seed_demo) and of the browser tests' seeded namespace."""

from __future__ import annotations

from collections.abc import Iterable

from apps.access.models import Role
from apps.access.services import membership_set
from apps.memories import services
from apps.memories.models import Memory, Namespace

PROJECT_MEMORIES: list[dict] = [
    {
        "title": "Use Redis for the session cache",
        "content": "We decided to keep **sessions in Redis** (db 1) with a 14-day TTL. "
        "Postgres was too slow under the login storm on Mondays.",
        "category": "decision",
        "tags": ["sessions", "redis"],
        "file_path": "memoryhub/settings/base.py",
        "importance": 0.8,
    },
    {
        "title": "Cache invalidation on write",
        "content": "Every write service clears the cached search facets of its namespace; "
        "forgetting this showed stale tag counts for up to a minute.",
        "category": "learning",
        "tags": ["cache"],
        "file_path": "apps/memories/services/create.py",
    },
    {
        "title": "Sessions live in Postgres now",
        "content": "Since the Redis outage we store sessions in Postgres again "
        "(`django.contrib.sessions.backends.db`).",
        "category": "decision",
        "tags": ["sessions"],
    },
    {
        "title": "Never run migrations during the import window",
        "content": "Avoid `migrate` between 02:00 and 03:00 UTC: the nightly import holds "
        "locks on memories_memory and the migration waits, then times out.",
        "category": "warning",
        "tags": ["ops"],
        "tier": "core",
    },
    {
        "title": "Embeddings are normalised",
        "content": "all-MiniLM-L6-v2 vectors are L2-normalised before storage, so cosine "
        "distance and inner product rank the same way.",
        "category": "fact",
        "tags": ["search", "embeddings"],
        "file_path": "apps/vectors/embeddings.py",
    },
]


# A short decision chain for the why path: an incident caused a decision, and the existing
# warning about the import window rests on that decision. "Why does the import run at night?"
# answers along it (search, memory_why, the explain view).
CHAIN_INCIDENT = {
    "title": "Search outage of 14 March",
    "content": "On 14 March searches timed out for an hour: the daytime bulk import held locks "
    "on memories_memory while people were searching.",
    "category": "learning",
    "tags": ["ops", "incident"],
}
CHAIN_DECISION = {
    "title": "Nightly import at 02:00 UTC",
    "content": "The bulk import runs nightly at 02:00 UTC, outside working hours.",
    "category": "decision",
    "tags": ["ops"],
}
CHAIN_FOLLOW_UP = "Never run migrations during the import window"  # in PROJECT_MEMORIES
CHAIN_QUESTION = "Why does the import run at night?"


def seed_decision_chain(namespace: Namespace, *, door: str = "cli") -> tuple[Memory, Memory]:
    """The incident and the decision it caused; the import-window warning (stored already)
    depends on the decision. Returns (incident, decision)."""
    incident = services.memory_create(namespace=namespace, door=door, **CHAIN_INCIDENT).memory
    decision = services.memory_create(namespace=namespace, door=door, **CHAIN_DECISION).memory
    services.edge_create(source=incident, target=decision, relation="caused", door=door)
    follow_up = Memory.objects.filter(namespace=namespace, title=CHAIN_FOLLOW_UP).first()
    if follow_up is not None:
        services.edge_create(source=follow_up, target=decision, relation="depends_on", door=door)
    return incident, decision


def long_document() -> str:
    """A markdown handbook long enough to be stored as several chunks."""
    sections = []
    topics = ["Deploys", "Backups", "Incidents", "On-call", "Upgrades", "Monitoring"]
    for topic in topics:
        body = " ".join(
            f"{topic} step {i}: check the dashboard, write down what you saw, and tell the "
            f"channel before changing anything in production."
            for i in range(1, 9)
        )
        sections.append(f"## {topic}\n\n{body}\n")
    return "# Operations handbook\n\n" + "\n".join(sections)


def grant_owners(namespace, users: Iterable) -> list[str]:
    """Make `users` owners of `namespace`."""
    names = []
    for user in users:
        membership_set(namespace=namespace, user=user, role=Role.OWNER)
        names.append(user.get_username())
    return names
