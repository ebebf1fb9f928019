"""The permission model: each principal's reach, per action, through namespaces_for, can and
the restrict() of every scoped queryset (Namespace, Memory, CausalEdge, QueryLog)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser, User

from apps.access.models import NamespaceMembership, Role
from apps.access.permissions import Action, can, namespaces_for
from apps.access.services import token_create
from apps.memories.duplicate_hash import content_hash
from apps.memories.models import CausalEdge, Memory, Namespace
from apps.search.models import QueryLog

V, F, C, M = Action.VIEW, Action.FEEDBACK, Action.CHANGE, Action.MANAGE


@pytest.fixture
def world(db):
    """Namespaces alpha and beta, each with two memories, an edge and a logged search; people
    with each role in alpha; tokens of each kind on alpha."""
    alpha = Namespace.objects.create(name="alpha")
    beta = Namespace.objects.create(name="beta")
    for ns in (alpha, beta):
        a, b = (
            Memory.objects.create(namespace=ns, content=text, content_hash=content_hash(text))
            for text in (f"{ns.name} one", f"{ns.name} two")
        )
        CausalEdge.objects.create(namespace=ns, source=a, target=b, relation="caused")
        QueryLog.objects.create(namespace=ns, query=f"{ns.name}?")
    people = {}
    for role in Role:
        user = User.objects.create_user(role.value, password="x")
        NamespaceMembership.objects.create(user=user, namespace=alpha, role=role)
        people[role.value] = user
    inactive = User.objects.create_user("inactive", password="x", is_active=False)
    NamespaceMembership.objects.create(user=inactive, namespace=alpha, role=Role.OWNER)
    revoked = token_create(name="revoked", namespaces=[alpha])[0]
    revoked.revoked = True
    revoked.save()
    return {
        "alpha": alpha,
        "beta": beta,
        **people,
        "nobody": User.objects.create_user("nobody", password="x"),
        "superuser": User.objects.create_superuser("root", password="x"),
        "anonymous": AnonymousUser(),
        "none": None,
        "inactive": inactive,
        "ro_token": token_create(name="ro", namespaces=[alpha], read_only=True)[0],
        "rw_token": token_create(name="rw", namespaces=[alpha])[0],
        "revoked_token": revoked,
    }


# principal -> {action: namespaces reached}
EXPECTED = {
    "viewer": {V: {"alpha"}, F: {"alpha"}, C: set(), M: set()},
    "editor": {V: {"alpha"}, F: {"alpha"}, C: {"alpha"}, M: set()},
    "owner": {V: {"alpha"}, F: {"alpha"}, C: {"alpha"}, M: {"alpha"}},
    "superuser": {a: {"alpha", "beta"} for a in Action},
    "nobody": {a: set() for a in Action},
    "anonymous": {a: set() for a in Action},
    "none": {a: set() for a in Action},
    "inactive": {a: set() for a in Action},
    "ro_token": {V: {"alpha"}, F: set(), C: set(), M: set()},
    "rw_token": {V: {"alpha"}, F: {"alpha"}, C: {"alpha"}, M: set()},
    "revoked_token": {a: set() for a in Action},
}
CASES = [(who, action) for who in EXPECTED for action in Action]


@pytest.mark.parametrize(("who", "action"), CASES)
def test_namespaces_for_and_can_agree_with_the_rules(world, who, action):
    principal = world[who]
    expected = EXPECTED[who][action]
    assert {ns.name for ns in namespaces_for(principal, action)} == expected
    assert {ns.name for ns in Namespace.objects.restrict(principal, action)} == expected
    for name in ("alpha", "beta"):
        assert can(principal, world[name], action) is (name in expected)
        assert can(principal, world[name].pk, action) is (name in expected)


@pytest.mark.parametrize(("who", "action"), CASES)
def test_restrict_scopes_every_queryset(world, who, action, django_assert_max_num_queries):
    principal = world[who]
    expected = EXPECTED[who][action]
    for model, count_per_namespace in ((Memory, 2), (CausalEdge, 1), (QueryLog, 1)):
        # At most one query: the allowed namespaces are a subquery, not a second round trip
        # (none at all when nothing is allowed).
        with django_assert_max_num_queries(1):
            rows = list(model.objects.restrict(principal, action).select_related("namespace"))
        assert {row.namespace.name for row in rows} == expected
        assert len(rows) == count_per_namespace * len(expected)


def test_restrict_chains_with_other_filters(world):
    alpha_memories = Memory.objects.filter(content__endswith="one").restrict(world["editor"], C)
    assert [m.content for m in alpha_memories] == ["alpha one"]
    assert not Memory.objects.restrict(world["editor"], C).in_namespace(world["beta"]).exists()


def test_a_token_reaches_only_its_namespaces_even_when_they_change(world):
    token = world["rw_token"]
    assert {ns.name for ns in namespaces_for(token, V)} == {"alpha"}
    token.namespaces.add(world["beta"])
    assert {ns.name for ns in namespaces_for(token, V)} == {"alpha", "beta"}
    assert Memory.objects.restrict(token, C).count() == 4


def test_a_membership_role_change_takes_effect_at_once(world):
    viewer = world["viewer"]
    assert not can(viewer, world["alpha"], C)
    NamespaceMembership.objects.filter(user=viewer).update(role=Role.EDITOR)
    assert can(viewer, world["alpha"], C)
    assert Memory.objects.restrict(viewer, C).count() == 2


def test_one_membership_per_user_and_namespace(world):
    from django.db import IntegrityError, transaction

    with pytest.raises(IntegrityError), transaction.atomic():
        NamespaceMembership.objects.create(user=world["viewer"], namespace=world["alpha"])
    with pytest.raises(IntegrityError), transaction.atomic():
        NamespaceMembership.objects.create(
            user=world["nobody"], namespace=world["alpha"], role="admin"
        )
