"""Navigation context for every page: the namespaces the person may open, and the current one."""

from __future__ import annotations

from django.http import HttpRequest

from .access import visible_namespaces


def navigation(request: HttpRequest) -> dict:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {
        "nav_namespaces": list(visible_namespaces(user).values_list("name", flat=True)),
        "nav_current": request.session.get("ui_namespace", ""),
    }
