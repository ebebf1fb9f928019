"""Who may do what in the browser UI: the one place every UI view asks.

Views never filter by namespace themselves. They declare the action they need with
`@namespace_view(action)` or `@memory_view(action)`; the decorator resolves the namespace or
memory through the permission model's scoped querysets and hands the view the object. Something
outside the person's namespaces is "not found" (404), never "forbidden", so ids elsewhere cannot
be probed; a visible object the person may not change is 403.
"""

from __future__ import annotations

import contextlib
import functools
import uuid
from collections.abc import Callable

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse

from apps.access.permissions import Action, can, namespaces_for, role_of
from apps.core.exceptions import NotFound
from apps.memories.models import Memory, Namespace, Review

__all__ = ["Action", "can", "memory_view", "namespace_view", "role_of", "visible_namespaces"]


def visible_namespaces(user) -> QuerySet[Namespace]:
    return namespaces_for(user, Action.VIEW)


def _require(user, namespace: Namespace, action: Action) -> None:
    if action != Action.VIEW and not can(user, namespace, action):
        raise PermissionDenied(f"Your role in '{namespace.name}' does not allow this.")


def namespace_or_404(user, name: str, action: Action = Action.VIEW) -> Namespace:
    namespace = visible_namespaces(user).filter(name=name).first()
    if namespace is None:
        raise Http404("No such namespace.")
    _require(user, namespace, action)
    return namespace


def memory_or_404(user, memory_id, action: Action = Action.VIEW) -> Memory:
    try:
        key = uuid.UUID(str(memory_id))
    except ValueError:
        raise Http404("No such memory.") from None
    memory = (
        Memory.objects.restrict(user, Action.VIEW)
        .select_related("namespace")
        .filter(pk=key)
        .first()
    )
    if memory is None:
        # A memory waiting for review has a page for the editors who review it, none else.
        memory = (
            Memory.every_state.restrict(user, Action.CHANGE)
            .select_related("namespace")
            .filter(pk=key, review=Review.PENDING)
            .first()
        )
    if memory is None:
        raise Http404("No such memory.")
    _require(user, memory.namespace, action)
    return memory


View = Callable[..., HttpResponse]


@contextlib.contextmanager
def _gone_is_404():
    """A memory deleted by someone else between the page's lookup and its write (the write path
    then raises NotFound under the row lock) is "not found" too, not a server error."""
    try:
        yield
    except NotFound as exc:
        raise Http404(str(exc)) from exc


def namespace_view(action: Action = Action.VIEW) -> Callable[[View], View]:
    """The view gets `namespace` (a Namespace) instead of the URL's namespace name."""

    def decorate(view: View) -> View:
        @login_required
        @functools.wraps(view)
        def wrapper(request: HttpRequest, namespace: str, **kwargs) -> HttpResponse:
            ns = namespace_or_404(request.user, namespace, action)
            request.session["ui_namespace"] = ns.name
            with _gone_is_404():
                return view(request, namespace=ns, **kwargs)

        return wrapper

    return decorate


def memory_view(action: Action = Action.VIEW) -> Callable[[View], View]:
    """The view gets `memory` (a Memory, namespace loaded) instead of the URL's memory id."""

    def decorate(view: View) -> View:
        @login_required
        @functools.wraps(view)
        def wrapper(request: HttpRequest, memory_id, **kwargs) -> HttpResponse:
            memory = memory_or_404(request.user, memory_id, action)
            request.session["ui_namespace"] = memory.namespace.name
            with _gone_is_404():
                return view(request, memory=memory, **kwargs)

        return wrapper

    return decorate


def current_namespace(request: HttpRequest, name: str | None = None) -> Namespace | None:
    """The namespace a page without one in its URL acts on: asked for, last used, or first."""
    visible = visible_namespaces(request.user)
    for candidate in (name, request.session.get("ui_namespace")):
        if candidate:
            found = visible.filter(name=candidate).first()
            if found is not None:
                return found
            if candidate == name:
                raise Http404("No such namespace.")
    return visible.first()
