"""Resolving what a call acts on: invisible is "not found", visible but not allowed is
"permission denied", for people and tokens alike."""

from __future__ import annotations

import pytest

from apps.access.permissions import Action
from apps.access.scoping import edge_for, memory_for, namespace_for, visible_namespaces
from apps.core.exceptions import NotFound, PermissionDenied, ValidationFailed
from apps.memories.models import CausalEdge, Memory
from apps.search.selectors import query_log_for

from .test_permissions import world  # noqa: F401  (fixture)


def _memory(world, ns):  # noqa: F811
    return Memory.objects.filter(namespace=world[ns]).order_by("content").first()


@pytest.mark.parametrize("who", ["viewer", "editor", "owner", "ro_token", "rw_token"])
def test_another_namespace_is_not_found_for_everyone_but_a_superuser(world, who):  # noqa: F811
    principal = world[who]
    beta_memory = _memory(world, "beta")
    beta_edge = CausalEdge.objects.get(namespace=world["beta"])
    beta_log = world["beta"].query_logs.get()
    for action in (Action.VIEW, Action.CHANGE):
        with pytest.raises(NotFound):
            memory_for(principal, beta_memory.id, action=action)
        with pytest.raises(NotFound):
            edge_for(principal, beta_edge.pk, action=action)
        with pytest.raises(NotFound):
            namespace_for(principal, "beta", action=action)
    with pytest.raises(NotFound):
        query_log_for(principal, beta_log.pk)
    assert memory_for(world["superuser"], beta_memory.id, action=Action.CHANGE) == beta_memory


def test_visible_but_not_allowed_is_permission_denied_with_a_reason(world):  # noqa: F811
    memory = _memory(world, "alpha")
    assert memory_for(world["viewer"], memory.id) == memory
    with pytest.raises(PermissionDenied, match=r"role in 'alpha' \(viewer\)"):
        memory_for(world["viewer"], memory.id, action=Action.CHANGE)
    with pytest.raises(PermissionDenied, match="read-only"):
        memory_for(world["ro_token"], memory.id, action=Action.CHANGE)
    with pytest.raises(PermissionDenied, match="read-only"):
        query_log_for(world["ro_token"], world["alpha"].query_logs.get().pk, action="feedback")
    with pytest.raises(PermissionDenied, match="cannot manage"):
        namespace_for(world["rw_token"], "alpha", action=Action.MANAGE)
    assert namespace_for(world["owner"], "alpha", action=Action.MANAGE) == world["alpha"]
    assert memory_for(world["editor"], memory.id, action=Action.CHANGE) == memory
    log = query_log_for(world["viewer"], world["alpha"].query_logs.get().pk, action="feedback")
    assert log.namespace == world["alpha"]


def test_namespace_is_implied_only_when_one_is_visible(world):  # noqa: F811
    assert namespace_for(world["editor"]) == world["alpha"]
    with pytest.raises(ValidationFailed) as excinfo:
        namespace_for(world["superuser"], field="ns")
    assert "alpha, beta" in excinfo.value.errors["ns"][0]
    with pytest.raises(NotFound):
        namespace_for(world["nobody"])
    assert [ns.name for ns in visible_namespaces(world["superuser"])] == ["alpha", "beta"]
    assert visible_namespaces(world["anonymous"]) == []


def test_a_bad_memory_id_names_the_field(world):  # noqa: F811
    with pytest.raises(ValidationFailed) as excinfo:
        memory_for(world["editor"], "not-a-uuid", field="source")
    assert "source" in excinfo.value.errors
