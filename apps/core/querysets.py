"""`restrict(principal, action)`: the one permission filter every door applies.

Each queryset knows its path to a namespace (`namespace_path`); which namespaces a principal
reaches is the registered policy's answer (apps.core.permissions).
"""

from __future__ import annotations

from typing import Any

from django.db import models

from .permissions import Action, allowed_namespaces


class RestrictedQuerySet(models.QuerySet):
    """A queryset whose rows belong to a namespace reached through `namespace_path`."""

    namespace_path = "namespace"

    def restrict(self, principal: Any, action: Action | str) -> RestrictedQuerySet:
        """Only rows in namespaces where `principal` (an ApiToken or a user) may do `action`.

        The allowed namespaces go in as a subquery, so this adds no query of its own.
        """
        allowed = allowed_namespaces(principal, action).values("pk")
        return self.filter(**{f"{self.namespace_path}__in": allowed})
