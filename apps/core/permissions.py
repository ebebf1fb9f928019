"""The vocabulary of permissions and the seam to the policy that applies it.

`Action` names what a caller wants to do; the access app decides who may (apps.access.permissions)
and registers that decision here when it is ready. Every room can thus say "restrict this to
what the caller may view" (apps.core.querysets) without importing the access app, which itself
builds on memories: the dependency stays one-way. An unregistered policy fails closed.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.db.models import QuerySet


class Action(StrEnum):
    VIEW = "view"  # read, search, list
    FEEDBACK = "feedback"  # say whether a search helped
    CHANGE = "change"  # create, edit, archive, link, delete, restore
    MANAGE = "manage"  # members and tokens


# (principal, action) -> QuerySet of the namespaces the principal may act on.
NamespacePolicy = Callable[[Any, Action], QuerySet]

_policy: NamespacePolicy | None = None


def register_namespace_policy(policy: NamespacePolicy) -> None:
    global _policy
    _policy = policy


def allowed_namespaces(principal: Any, action: Action | str) -> QuerySet:
    if _policy is None:
        raise ImproperlyConfigured("No namespace policy registered (is apps.access installed?).")
    return _policy(principal, Action(action))
