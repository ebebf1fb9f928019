"""`restrict(principal, action)`: the one permission filter every door applies.

Each queryset knows its path to a namespace (`namespace_path`); who may reach which namespace is
the access app's policy, registered here when that app is ready. Keeping the seam in the bottom
room lets memories and search declare restricted querysets without importing apps.access (which
itself builds on memories): the dependency stays one-way.

An unregistered policy fails closed: `restrict()` raises rather than returning everything.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.db import models

# (principal, action) -> QuerySet of the namespaces the principal may act on.
NamespacePolicy = Callable[[Any, str], models.QuerySet]

_policy: NamespacePolicy | None = None


def register_namespace_policy(policy: NamespacePolicy) -> None:
    global _policy
    _policy = policy


def allowed_namespaces(principal: Any, action: str) -> models.QuerySet:
    if _policy is None:
        raise ImproperlyConfigured("No namespace policy registered (is apps.access installed?).")
    return _policy(principal, action)


class RestrictedQuerySet(models.QuerySet):
    """A queryset whose rows belong to a namespace reached through `namespace_path`."""

    namespace_path = "namespace"

    def restrict(self, principal: Any, action: str) -> RestrictedQuerySet:
        """Only rows in namespaces where `principal` (an ApiToken or a user) may do `action`.

        The allowed namespaces go in as a subquery, so this adds no query of its own.
        """
        allowed = allowed_namespaces(principal, action).values("pk")
        return self.filter(**{f"{self.namespace_path}__in": allowed})
