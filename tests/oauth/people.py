"""A person with roles in some namespaces (committed: the live server must see them)."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import get_user_model

from apps.access.models import Role
from apps.access.services import membership_set
from apps.memories.models import Namespace

PASSWORD = "correct-horse-battery"


@dataclass
class Person:
    user: object
    username: str
    alpha: Namespace  # editor
    beta: Namespace  # viewer
    gamma: Namespace  # not a member


def make_person(username: str = "alice") -> Person:
    user = get_user_model().objects.create_user(username, password=PASSWORD)
    alpha = Namespace.objects.create(name=f"{username}-alpha")
    beta = Namespace.objects.create(name=f"{username}-beta")
    gamma = Namespace.objects.create(name=f"{username}-gamma")
    membership_set(namespace=alpha, user=user, role=Role.EDITOR)
    membership_set(namespace=beta, user=user, role=Role.VIEWER)
    return Person(user=user, username=username, alpha=alpha, beta=beta, gamma=gamma)
