"""The permission model: who may do what in which namespace.

A principal is an ApiToken or a Django user (people in the web UI and the admin). The rules:

- a person acts through their role in a namespace: viewer (view, feedback) < editor (+ change)
  < owner (+ manage); a superuser may do everything everywhere; anonymous or inactive users
  nothing;
- a token reaches only its own namespaces: a read-only token may view, a read-write token may
  view, give feedback and change; no token may manage (members and tokens are people's work);
  a revoked token nothing;
- an OAuth connection (an assistant a person connected) reaches its granted namespaces, with
  the read-only or read-write token actions chosen at consent, and never more than the
  person's own role there allows now: a viewer's connection only reads, a removed member's
  connection reaches nothing.

`namespaces_for` is the single source: querysets apply it with `restrict(principal, action)`
(apps.core.querysets), and `can` answers the same question for one namespace. `Action` is
defined in apps.core.permissions (so lower rooms can name actions) and re-exported here.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import QuerySet

from apps.core.permissions import Action
from apps.memories.models import Namespace

from .models import ApiToken, OAuthConnection, Role

ROLE_ACTIONS: dict[str, frozenset[Action]] = {
    Role.VIEWER: frozenset({Action.VIEW, Action.FEEDBACK}),
    Role.EDITOR: frozenset({Action.VIEW, Action.FEEDBACK, Action.CHANGE}),
    Role.OWNER: frozenset(Action),
}
READ_ONLY_TOKEN_ACTIONS = frozenset({Action.VIEW})
READ_WRITE_TOKEN_ACTIONS = frozenset({Action.VIEW, Action.FEEDBACK, Action.CHANGE})

__all__ = ["Action", "Principal", "can", "namespaces_for", "role_of", "roles_allowing"]

Principal = ApiToken | OAuthConnection | AbstractBaseUser | AnonymousUser


def token_actions(token: ApiToken) -> frozenset[Action]:
    if token.revoked:
        return frozenset()
    return READ_ONLY_TOKEN_ACTIONS if token.read_only else READ_WRITE_TOKEN_ACTIONS


def connection_actions(connection: OAuthConnection) -> frozenset[Action]:
    return READ_ONLY_TOKEN_ACTIONS if connection.read_only else READ_WRITE_TOKEN_ACTIONS


def roles_allowing(action: Action | str) -> list[str]:
    return [role for role, actions in ROLE_ACTIONS.items() if action in actions]


def namespaces_for(principal: Principal | None, action: Action | str) -> QuerySet[Namespace]:
    """The namespaces where `principal` may do `action` (a lazy queryset, usable as subquery)."""
    action = Action(action)
    namespaces = Namespace.objects.all()
    if isinstance(principal, ApiToken):
        if action not in token_actions(principal):
            return namespaces.none()
        return namespaces.filter(tokens=principal)
    if isinstance(principal, OAuthConnection):
        if action not in connection_actions(principal):
            return namespaces.none()
        person = namespaces_for(principal.user, action)
        return namespaces.filter(oauth_connections=principal, pk__in=person.values("pk"))
    if not _active_user(principal):
        return namespaces.none()
    if principal.is_superuser:
        return namespaces
    return namespaces.filter(
        memberships__user=principal, memberships__role__in=roles_allowing(action)
    )


def can(principal: Principal | None, namespace: Namespace | int, action: Action | str) -> bool:
    """Whether `principal` may do `action` in `namespace` (a Namespace or its id)."""
    action = Action(action)
    ns_id = namespace if isinstance(namespace, int) else namespace.pk
    if isinstance(principal, ApiToken):
        # The token's namespaces are usually prefetched (token_authenticate): no query.
        return action in token_actions(principal) and any(
            ns.pk == ns_id for ns in principal.namespaces.all()
        )
    if isinstance(principal, OAuthConnection):
        return namespaces_for(principal, action).filter(pk=ns_id).exists()
    if not _active_user(principal):
        return False
    if principal.is_superuser:
        return True
    return namespaces_for(principal, action).filter(pk=ns_id).exists()


def role_of(user: Any, namespace: Namespace | int) -> str | None:
    """A person's role in a namespace ("owner" for a superuser), or None."""
    if not _active_user(user):
        return None
    if user.is_superuser:
        return Role.OWNER
    ns_id = namespace if isinstance(namespace, int) else namespace.pk
    return user.memberships.filter(namespace_id=ns_id).values_list("role", flat=True).first()


def _active_user(principal: Any) -> bool:
    return bool(
        principal is not None
        and getattr(principal, "is_authenticated", False)
        and getattr(principal, "is_active", False)
    )
