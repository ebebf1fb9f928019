"""Provisional stand-in for apps.access.permissions until the permission model lands on main:
superusers reach every namespace, everyone else none. Replaced by a re-export then."""

from __future__ import annotations

from enum import StrEnum

from apps.memories.models import Namespace


class Action(StrEnum):
    VIEW = "view"
    FEEDBACK = "feedback"
    CHANGE = "change"
    MANAGE = "manage"


def namespaces_for(principal, action):
    if principal is None or not principal.is_authenticated or not principal.is_active:
        return Namespace.objects.none()
    if principal.is_superuser:
        return Namespace.objects.all()
    return Namespace.objects.none()


def can(principal, namespace, action) -> bool:
    return namespaces_for(principal, action).filter(pk=namespace.pk).exists()
