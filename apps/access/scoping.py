"""Resolving what a call acts on, for every door (REST, MCP, UI): thin helpers over
`restrict()` that turn "not there" into the errors the interfaces report.

A namespace or object the principal cannot see is reported as not found (never as forbidden),
so nobody can probe which names or ids exist elsewhere. A visible object the principal may not
change raises PermissionDenied (403).
"""

from __future__ import annotations

import uuid

from apps.core.exceptions import NotFound, PermissionDenied, ValidationFailed
from apps.memories.models import CausalEdge, Memory, Namespace
from apps.transfer import batch_jobs
from apps.transfer.models import BatchJob

from .models import ApiToken, OAuthConnection
from .permissions import Action, Principal, can, role_of

VERBS = {
    Action.VIEW: "read",
    Action.FEEDBACK: "give feedback in",
    Action.CHANGE: "change",
    Action.MANAGE: "manage",
}


def visible_namespaces(principal: Principal) -> list[Namespace]:
    """The namespaces `principal` may view, ordered by name."""
    return list(Namespace.objects.restrict(principal, Action.VIEW).order_by("name"))


def require(principal: Principal, namespace: Namespace, action: Action) -> None:
    """PermissionDenied unless `principal` may do `action` in a namespace it can see."""
    if action == Action.VIEW or can(principal, namespace, action):
        return
    verb = VERBS[Action(action)]
    if isinstance(principal, ApiToken):
        if action == Action.MANAGE:
            raise PermissionDenied(f"API tokens cannot manage '{namespace.name}'.")
        raise PermissionDenied(f"This token is read-only; it cannot {verb} '{namespace.name}'.")
    if isinstance(principal, OAuthConnection):
        _refuse_connection(principal, namespace, action)
    role = role_of(principal, namespace) or "none"
    raise PermissionDenied(
        f"Your role in '{namespace.name}' ({role}) does not allow you to {verb} it."
    )


def _refuse_connection(connection: OAuthConnection, namespace: Namespace, action: Action) -> None:
    verb = VERBS[Action(action)]
    if action == Action.MANAGE:
        raise PermissionDenied(f"Connected apps cannot manage '{namespace.name}'.")
    if connection.read_only:
        raise PermissionDenied(
            f"This app was connected read-only; it cannot {verb} '{namespace.name}'."
        )
    role = role_of(connection.user, namespace) or "none"
    raise PermissionDenied(
        f"{connection.user.get_username()}'s role in '{namespace.name}' ({role}) does not allow "
        f"this app to {verb} it."
    )


def namespace_for(
    principal: Principal,
    name: str | None = None,
    *,
    action: Action = Action.VIEW,
    field: str = "namespace",
) -> Namespace:
    """Resolve the namespace a call acts on.

    With no name, a principal that can see exactly one namespace uses that one; one that sees
    several must say which.
    """
    visible = Namespace.objects.restrict(principal, Action.VIEW)
    if name:
        found = visible.filter(name=name).first()
        if found is None:
            raise NotFound(f"Namespace '{name}' does not exist or you cannot access it.")
    else:
        namespaces = list(visible.order_by("name")[:51])
        if len(namespaces) == 1:
            found = namespaces[0]
        elif not namespaces:
            raise NotFound("You cannot access any namespace.")
        else:
            names = ", ".join(ns.name for ns in namespaces[:50])
            raise ValidationFailed({field: f"Required: you can use several namespaces ({names})."})
    require(principal, found, action)
    return found


def parse_memory_id(value, field: str) -> uuid.UUID:
    try:
        return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
    except (ValueError, TypeError, AttributeError):
        raise ValidationFailed({field: f"'{value}' is not a valid memory id (UUID)."}) from None


def memory_for(
    principal: Principal, memory_id, *, action: Action = Action.VIEW, field: str = "memory_id"
) -> Memory:
    """The memory with this id, if `principal` can see it (and may do `action` to it)."""
    pk = parse_memory_id(memory_id, field)
    memory = (
        Memory.objects.restrict(principal, Action.VIEW)
        .select_related("namespace")
        .prefetch_related("tags")
        .filter(pk=pk)
        .first()
    )
    if memory is None:
        raise NotFound(f"Memory {pk} does not exist or you cannot access it.")
    require(principal, memory.namespace, action)
    return memory


def edge_for(principal: Principal, edge_id: int, *, action: Action = Action.VIEW) -> CausalEdge:
    edge = (
        CausalEdge.objects.restrict(principal, Action.VIEW)
        .filter(pk=edge_id)
        .select_related("namespace")
        .first()
    )
    if edge is None:
        raise NotFound(f"Edge {edge_id} does not exist or you cannot access it.")
    require(principal, edge.namespace, action)
    return edge


def batch_job_for(principal: Principal, job_id) -> BatchJob:
    """A batch kept for the background, if `principal` can see its namespace."""
    job = batch_jobs.visible_job(job_id, Namespace.objects.restrict(principal, Action.VIEW))
    if job is None:
        raise NotFound(f"Batch job {job_id} does not exist or you cannot access it.")
    return job
