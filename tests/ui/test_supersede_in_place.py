"""The update warning's Supersede posts to the conflicts queue's action and comes back to the
page it was pressed on, only ever a page of this site."""

from __future__ import annotations

import pytest
from django.test import Client

from apps.access.models import NamespaceMembership, Role
from apps.memories import services
from apps.memories.models import Memory

from .conftest import PASSWORD, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def pair(namespace, embedding_model):
    old = services.memory_create(namespace=namespace, content="Our CI runs on Jenkins.").memory
    written = services.memory_create(
        namespace=namespace, content="We moved CI from Jenkins to GitHub Actions."
    )
    assert [u["id"] for u in written.possible_updates] == [str(old.pk)]
    user = make_user("curator")
    NamespaceMembership.objects.create(user=user, namespace=namespace, role=Role.EDITOR)
    client = Client()
    assert client.login(username="curator", password=PASSWORD)
    return client, old, written.memory


def _supersede(client, namespace, old, new, there: str):
    return client.post(
        f"/ns/{namespace.name}/queues/conflicts/act/",
        {"first": old.pk, "second": new.pk, "do": f"supersede:{new.pk}", "next": there},
    )


def test_supersede_comes_back_to_the_new_memory(pair, namespace):
    client, old, new = pair
    page = client.get(f"/memories/{new.pk}/").content.decode()
    assert 'class="banner gap noticed"' in page and f'value="supersede:{new.pk}"' in page
    answer = _supersede(client, namespace, old, new, f"/memories/{new.pk}/")
    assert answer.status_code == 302 and answer["Location"] == f"/memories/{new.pk}/"
    assert Memory.objects.get(pk=old.pk).valid_until is not None
    assert "banner gap noticed" not in client.get(f"/memories/{new.pk}/").content.decode()


@pytest.mark.parametrize("there", ["https://evil.example/", "//evil.example/x", "javascript:x"])
def test_never_back_to_another_site(pair, namespace, there):
    client, old, new = pair
    answer = _supersede(client, namespace, old, new, there)
    assert answer["Location"] == f"/ns/{namespace.name}/queues/conflicts/"
