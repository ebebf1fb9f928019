"""Counts beside the curator's queues in the navigation: review, near-duplicates, conflicts,
stale, re-check and missed searches.

The base template only knows the current namespace's name, which the navigation context
already limited to namespaces the person may see. The counts are aggregate SQL queries (no
embedding, no rows loaded) kept for COUNTS_SECONDS in the cache, so most pages pay no query for
them; the queues' own actions drop the cached figures at once (`forget_counts`).
"""

from __future__ import annotations

from django import template
from django.core.cache import cache

from apps.memories.models import Namespace
from apps.memories.selectors import stale_counts
from apps.queues.recheck import recheck_count
from apps.queues.review import pending_count
from apps.queues.selectors import conflict_count, duplicate_count
from apps.search.selectors import missed_count

register = template.Library()

COUNTS_SECONDS = 30
QUEUES = ("review", "duplicates", "conflicts", "stale", "recheck", "missed")
EMPTY = dict.fromkeys((*QUEUES, "total"), 0)


def _key(name: str) -> str:
    return f"ui:queue-counts:{name}"


def forget_counts(name: str) -> None:
    cache.delete(_key(name))


def queue_counts(namespace: Namespace, known: dict | None = None) -> dict:
    """The six counts; a queue page passes the one it has just computed (`known`), so its
    own aggregate does not run twice."""
    known = known or {}
    counters = {
        "review": lambda: pending_count(namespace),
        "duplicates": lambda: duplicate_count(namespace=namespace),
        "conflicts": lambda: conflict_count(namespace=namespace),
        "stale": lambda: stale_counts(namespace=namespace)["total"],
        "recheck": lambda: recheck_count(namespace=namespace),
        "missed": lambda: missed_count(namespace=namespace),
    }
    counts = {name: known[name] if name in known else count() for name, count in counters.items()}
    counts["total"] = sum(counts.values())
    return counts


@register.simple_tag(takes_context=True)
def stale_queue_counts(context, name: str) -> dict:
    names = context.get("nav_namespaces") or []
    if name not in names:
        return EMPTY
    counts = cache.get(_key(name))
    if counts is None:
        namespace = Namespace.objects.filter(name=name).first()
        if namespace is None:
            return EMPTY
        counts = queue_counts(namespace, context.get("queue_counts_known"))
        cache.set(_key(name), counts, COUNTS_SECONDS)
    return counts
