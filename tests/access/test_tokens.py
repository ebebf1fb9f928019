"""Tokens: created with `manage.py create_token` or in the admin; printed once, stored hashed."""

from __future__ import annotations

import hashlib
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from apps.access.models import ApiToken
from apps.access.services import token_authenticate
from apps.memories.models import Namespace


def create_token(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("create_token", *args, stdout=out, stderr=err)
    return out.getvalue().strip(), err.getvalue()


@pytest.mark.django_db
def test_create_token_prints_the_secret_once_and_stores_only_its_hash():
    raw, message = create_token("--namespace", "projects", "--read-only")
    assert raw.startswith("mh_") and "not shown again" in message
    token = ApiToken.objects.get(prefix=raw[:10])
    assert token.key_hash == hashlib.sha256(raw.encode()).hexdigest()
    assert raw not in {token.name, token.prefix, token.key_hash}
    assert token.read_only is True
    assert [ns.name for ns in token.namespaces.all()] == ["projects"]
    assert token_authenticate(raw) == token


@pytest.mark.django_db
def test_create_token_for_several_namespaces_read_write():
    Namespace.objects.create(name="existing")
    raw, _ = create_token("--namespace", "existing", "--namespace", "fresh", "--name", "ci")
    token = token_authenticate(raw)
    assert token.name == "ci" and token.read_only is False
    assert sorted(ns.name for ns in token.namespaces.all()) == ["existing", "fresh"]
    assert Namespace.objects.filter(name__in=["existing", "fresh"]).count() == 2


@pytest.mark.django_db
def test_create_token_rejects_a_bad_namespace_name():
    before = ApiToken.objects.count()
    with pytest.raises(CommandError, match="namespace"):
        create_token("--namespace", "Not Valid!")
    assert ApiToken.objects.count() == before


@pytest.mark.django_db
def test_admin_creates_a_token_and_shows_it_once(client):
    admin = User.objects.create_superuser("admin", "a@example.com", "pw")
    client.force_login(admin)
    alpha = Namespace.objects.create(name="alpha")
    response = client.post(
        "/admin/access/apitoken/add/",
        {"name": "desktop", "namespaces": [alpha.pk], "read_only": "on"},
        follow=True,
    )
    assert response.status_code == 200
    shown = [str(m) for m in response.context["messages"]]
    raw = next(word for text in shown for word in text.split() if word.startswith("mh_"))
    token = token_authenticate(raw)
    assert token is not None and token.name == "desktop" and token.read_only
    assert [ns.name for ns in token.namespaces.all()] == ["alpha"]
    change = client.get(f"/admin/access/apitoken/{token.pk}/change/")
    assert raw not in change.content.decode()

    client.post(
        "/admin/access/apitoken/",
        {"action": "revoke", "_selected_action": [token.pk]},
        follow=True,
    )
    assert token_authenticate(raw) is None
