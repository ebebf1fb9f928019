"""Navigation context for every page: the namespaces the person may open, the current one and
their role in it (which decides the links shown; the views check again on the server)."""

from __future__ import annotations

from django.http import HttpRequest

from apps.access.models import Role

from .view_permissions import visible_namespaces


def navigation(request: HttpRequest) -> dict:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    names = list(visible_namespaces(user).values_list("name", flat=True))
    current = request.session.get("ui_namespace", "")
    if current not in names:
        current = names[0] if names else ""
    role = None
    if current:
        role = Role.OWNER if user.is_superuser else role_of_name(user, current)
    return {
        "nav_namespaces": names,
        "nav_current": current,
        "nav_role": role,
        "nav_can_change": role in (Role.EDITOR, Role.OWNER),
        "nav_can_manage": role == Role.OWNER,
    }


def role_of_name(user, name: str) -> str | None:
    return user.memberships.filter(namespace__name=name).values_list("role", flat=True).first()
