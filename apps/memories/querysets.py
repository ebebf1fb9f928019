"""Chainable filters reused by admin, API, MCP, UI and search.

Permission scoping is `restrict(principal, action)`, inherited from apps.core.querysets.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from django.db import models
from django.db.models import Q

from apps.core.querysets import RestrictedQuerySet


class NamespaceQuerySet(RestrictedQuerySet):
    namespace_path = "pk"


class MemoryQuerySet(RestrictedQuerySet):
    def in_namespace(self, namespace) -> MemoryQuerySet:
        """`namespace` is a Namespace, its id, or its name."""
        if isinstance(namespace, str):
            return self.filter(namespace__name=namespace)
        return self.filter(namespace=namespace)

    def in_namespaces(self, namespaces: Iterable) -> MemoryQuerySet:
        return self.filter(namespace__in=list(namespaces))

    def active(self) -> MemoryQuerySet:
        return self.filter(archived=False)

    def valid_at(self, moment) -> MemoryQuerySet:
        """Memories whose validity holds at `moment` (not superseded or ended by then)."""
        return self.filter(
            Q(valid_until__isnull=True) | Q(valid_until__gt=moment),
            Q(valid_from__isnull=True) | Q(valid_from__lte=moment),
        )

    def ended_by(self, moment) -> MemoryQuerySet:
        """Memories whose validity ended by `moment` (superseded, or known to end)."""
        return self.filter(valid_until__lte=moment)

    def with_tags(self, tags: Iterable[str]) -> MemoryQuerySet:
        """Memories carrying any of `tags`."""
        tags = [t for t in tags if t]
        if not tags:
            return self
        return self.filter(tags__name__in=tags).distinct()

    def in_categories(self, categories: Iterable[str]) -> MemoryQuerySet:
        categories = [c for c in categories if c]
        return self.filter(category__in=categories) if categories else self

    def written_by(
        self, *, person: str = "", credential: str = "", door: str = ""
    ) -> MemoryQuerySet:
        """Memories whose provenance names this person, token or app name, and door (each
        only when given)."""
        wanted = {"origin_person": person, "origin_credential": credential, "origin_door": door}
        return self.filter(**{k: v for k, v in wanted.items() if v})

    def created_between(
        self, after: datetime | None = None, before: datetime | None = None
    ) -> MemoryQuerySet:
        qs = self
        if after is not None:
            qs = qs.filter(created_at__gte=after)
        if before is not None:
            qs = qs.filter(created_at__lt=before)
        return qs


class SeenMemoryManager(models.Manager.from_queryset(MemoryQuerySet)):
    """Memories anyone may find: a memory waiting for review (or rejected in review) is seen
    only in the review queue, so every door, search and export that starts here leaves it
    out with one column condition."""

    def get_queryset(self) -> MemoryQuerySet:
        return super().get_queryset().filter(review="approved")


class EdgeQuerySet(RestrictedQuerySet):
    def in_namespace(self, namespace) -> EdgeQuerySet:
        if isinstance(namespace, str):
            return self.filter(namespace__name=namespace)
        return self.filter(namespace=namespace)

    def touching(self, memory_ids: Iterable) -> EdgeQuerySet:
        ids = list(memory_ids)
        return self.filter(models.Q(source_id__in=ids) | models.Q(target_id__in=ids))
