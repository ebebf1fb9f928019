"""Counts beside the stale and missed-searches queues in the navigation.

The base template only knows the current namespace's name, which the navigation context
already limited to namespaces the person may see. The counts are two aggregate queries (no
embedding) kept for COUNTS_SECONDS in the cache, so most pages pay no query for them; the
queues' own actions drop the cached figure at once (`forget_counts`).
"""

from __future__ import annotations

from django import template
from django.core.cache import cache

from apps.memories.models import Namespace
from apps.memories.selectors import stale_counts
from apps.search.selectors import missed_count

register = template.Library()

COUNTS_SECONDS = 30


def _key(name: str) -> str:
    return f"ui:queue-counts:stale-missed:{name}"


def forget_counts(name: str) -> None:
    cache.delete(_key(name))


@register.simple_tag(takes_context=True)
def stale_queue_counts(context, name: str) -> dict:
    names = context.get("nav_namespaces") or []
    if name not in names:
        return {"stale": 0, "missed": 0}
    counts = cache.get(_key(name))
    if counts is None:
        namespace = Namespace.objects.filter(name=name).first()
        if namespace is None:
            return {"stale": 0, "missed": 0}
        counts = {
            "stale": stale_counts(namespace=namespace)["total"],
            "missed": missed_count(namespace=namespace),
        }
        cache.set(_key(name), counts, COUNTS_SECONDS)
    return counts
