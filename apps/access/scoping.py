"""What an API token may reach. REST and MCP both resolve namespaces and objects through here,
so the rule "a token never sees or changes another namespace's data" lives in one place.

A namespace or object outside the token's namespaces is reported as not found (never as
forbidden), so a token cannot probe which names or ids exist elsewhere.
"""

from __future__ import annotations

import uuid

from apps.core.exceptions import NotFound, PermissionDenied, ValidationFailed
from apps.memories.models import CausalEdge, Memory, Namespace

from .models import ApiToken


def token_namespaces(token: ApiToken) -> list[Namespace]:
    """The token's namespaces, ordered by name (uses the prefetch of token_authenticate)."""
    return sorted(token.namespaces.all(), key=lambda ns: ns.name)


def _require_write(token: ApiToken, namespace: Namespace) -> None:
    if token.read_only:
        raise PermissionDenied(f"This token is read-only; it cannot change '{namespace.name}'.")


def namespace_for_token(
    token: ApiToken, name: str | None = None, *, write: bool = False, field: str = "namespace"
) -> Namespace:
    """Resolve the namespace a call acts on.

    With no name, a token scoped to exactly one namespace uses that one; a token with several
    must say which.
    """
    namespaces = token_namespaces(token)
    if name:
        found = next((ns for ns in namespaces if ns.name == name), None)
        if found is None:
            raise NotFound(f"Namespace '{name}' does not exist or this token cannot access it.")
    elif len(namespaces) == 1:
        found = namespaces[0]
    else:
        names = ", ".join(ns.name for ns in namespaces)
        raise ValidationFailed(
            {field: f"Required: this token can use several namespaces ({names})."}
        )
    if write:
        _require_write(token, found)
    return found


def _parse_uuid(value, field: str) -> uuid.UUID:
    try:
        return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
    except (ValueError, TypeError, AttributeError):
        raise ValidationFailed({field: f"'{value}' is not a valid memory id (UUID)."}) from None


def memory_for_token(
    token: ApiToken, memory_id, *, write: bool = False, field: str = "memory_id"
) -> Memory:
    """The memory with this id if it lies in one of the token's namespaces."""
    pk = _parse_uuid(memory_id, field)
    memory = (
        Memory.objects.for_token(token)
        .select_related("namespace")
        .prefetch_related("tags")
        .filter(pk=pk)
        .first()
    )
    if memory is None:
        raise NotFound(f"Memory {pk} does not exist or this token cannot access it.")
    if write:
        _require_write(token, memory.namespace)
    return memory


def edge_for_token(token: ApiToken, edge_id: int, *, write: bool = False) -> CausalEdge:
    edge = (
        CausalEdge.objects.filter(pk=edge_id, namespace__in=token.namespaces.all())
        .select_related("namespace")
        .first()
    )
    if edge is None:
        raise NotFound(f"Edge {edge_id} does not exist or this token cannot access it.")
    if write:
        _require_write(token, edge.namespace)
    return edge


def query_log_for_token(token: ApiToken, query_log_id: int, *, write: bool = False):
    """A logged search of one of the token's namespaces (feedback is given against it)."""
    from apps.search import querylog
    from apps.search.models import QueryLog

    logs = QueryLog.objects.filter(pk=query_log_id, namespace__in=token.namespaces.all())
    log = logs.select_related("namespace").first()
    if log is None:
        # The log row is written just after the search returns; feedback may be quicker.
        querylog.flush()
        log = logs.select_related("namespace").first()
    if log is None:
        raise NotFound(f"Search {query_log_id} does not exist or this token cannot access it.")
    if write:
        _require_write(token, log.namespace)
    return log
