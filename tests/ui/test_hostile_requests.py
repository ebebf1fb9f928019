"""Requests no page sends, answered as bad input (4xx naming the field), never a 500; `next`
never leads off the site; a token shared with another namespace is not revoked by the owner
of one of them alone."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from apps.access.models import NamespaceMembership, Role
from apps.access.services import token_create
from apps.memories import services

from .conftest import PASSWORD, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def acme(db, embedding_model):
    acme = services.namespace_get_or_create(name="acme")
    services.memory_create(namespace=acme, content="The deploy script needs sudo.")
    return acme


def _owner(namespace, name: str = "olivia") -> Client:
    NamespaceMembership.objects.create(user=make_user(name), namespace=namespace, role=Role.OWNER)
    client = Client()
    assert client.login(username=name, password=PASSWORD)
    return client


def test_removing_a_member_by_a_malformed_id_is_bad_input(acme):
    olivia = _owner(acme)
    for bad in ("abc", "1e5", "9" * 40, "-1"):
        response = olivia.post("/ns/acme/members/", {"remove": bad})
        assert response.status_code == 400
        assert b"remove: not the id of a member" in response.content


def test_link_candidates_with_a_nul_or_an_overlong_query_are_bad_input(acme):
    olivia = _owner(acme)
    memory = acme.memories.get()
    url = f"/memories/{memory.pk}/link/candidates/"
    nul = olivia.get(url, {"q": "deploy\x00"})
    assert nul.status_code == 400 and b"q: Contains a NUL" in nul.content
    long = olivia.get(url, {"q": "x" * 2001})
    assert long.status_code == 400 and b"q: at most 2000 characters" in long.content
    assert olivia.get(url, {"q": "deploy"}).status_code == 200


def test_dismissing_missed_queries_with_a_nul_in_a_key_is_refused(acme):
    olivia = _owner(acme)
    response = olivia.post(
        "/ns/acme/queues/missed/dismiss/", {"keys": ["fine", "bad\x00key"]}, follow=True
    )
    assert response.status_code == 200
    assert b"keys: each key is a search query" in response.content
    back = olivia.post("/ns/acme/queues/missed/bring-back/", {"keys": ["x" * 3000]}, follow=True)
    assert b"keys: each key is a search query" in back.content


@pytest.mark.parametrize(
    "target",
    ["//evil.example/", "/\\evil.example/", "https://evil.example/", "/\\/evil.example/"],
)
def test_next_never_leads_to_another_site(acme, target):
    olivia = _owner(acme)
    memory = acme.memories.get()
    bulk = olivia.post(
        "/ns/acme/memories/bulk/", {"ids": [str(memory.pk)], "action": "archive", "next": target}
    )
    assert bulk.status_code == 302 and bulk.headers["Location"] == "/ns/acme/memories/"
    stale = olivia.post("/ns/acme/queues/stale/act/", {"action": "refresh", "next": target})
    assert stale.status_code == 302 and stale.headers["Location"] == "/ns/acme/queues/stale/"
    inside = olivia.post(
        "/ns/acme/memories/bulk/", {"ids": [str(memory.pk)], "action": "restore", "next": "/x/?a=1"}
    )
    assert inside.headers["Location"] == "/x/?a=1"


def test_a_token_shared_with_another_namespace_is_shown_and_not_revoked_by_one_owner(acme):
    beta = services.namespace_get_or_create(name="beta")
    olivia = _owner(acme)
    token, _ = token_create(name="shared", namespaces=[acme, beta])
    page = olivia.get("/ns/acme/connect/")
    assert b"also serves: beta" in page.content
    refused = olivia.post(f"/ns/acme/tokens/{token.pk}/revoke/", follow=True)
    assert b"also serves 1 other namespace(s) you do not manage" in refused.content
    token.refresh_from_db()
    assert not token.revoked
    # Someone who manages both (here: owner of beta too) may revoke it.
    olivia_user = get_user_model().objects.get(username="olivia")
    NamespaceMembership.objects.create(user=olivia_user, namespace=beta, role=Role.OWNER)
    olivia.post(f"/ns/acme/tokens/{token.pk}/revoke/")
    token.refresh_from_db()
    assert token.revoked


def test_a_running_import_can_be_cancelled_by_its_owner_only(acme, settings, tmp_path):
    from apps.transfer import import_runs

    settings.IMPORT_DIR = tmp_path
    olivia = _owner(acme)
    run = {
        "id": "6f1c1f9e-0d43-4a8e-9b1a-3f2f64c8e0aa",
        "namespace": "acme",
        "user": get_user_model().objects.get(username="olivia").pk,
        "filename": "big.jsonl",
        "format": "jsonl",
        "format_label": "memoryhub JSONL",
        "phase": "writing",
        "done": 256,
        "total": 5000,
        "created": 256,
        "skipped": 0,
        "edges": 0,
        "errors": [],
        "error_count": 0,
        "started": 0,
        "finished": None,
    }
    import_runs._save(run)
    url = f"/ns/acme/transfer/import/{run['id']}/cancel/"
    other = _owner(acme, "oscar")
    assert other.post(url).status_code == 404  # not their run
    answer = olivia.post(url)
    assert answer.status_code == 200 and b"Stopping after this batch" in answer.content
    assert (tmp_path / f"{run['id']}.cancel").exists()
