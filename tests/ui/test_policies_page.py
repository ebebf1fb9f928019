"""The namespace's trust settings: owners set the review and secrets policies; an editor
cannot; a value that is not a choice is a 400 naming the field, nothing saved."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from apps.access.services import membership_set
from apps.memories.models import Namespace

pytestmark = pytest.mark.django_db


def _client(username: str, namespace: Namespace, role: str) -> Client:
    user = get_user_model().objects.create_user(username, password="pw-for-tests")
    membership_set(namespace=namespace, user=user, role=role)
    client = Client()
    client.force_login(user)
    return client


def test_owners_set_the_policies_editors_cannot():
    namespace = Namespace.objects.create(name="team")
    owner = _client("olga", namespace, "owner")
    page = owner.get("/ns/team/settings/")
    assert page.status_code == 200 and 'value="flagged" selected' in page.content.decode()

    saved = owner.post("/ns/team/settings/", {"review": "all", "secrets": "redact"})
    assert saved.status_code == 302
    namespace.refresh_from_db()
    assert (namespace.review, namespace.secrets) == ("all", "redact")

    bad = owner.post("/ns/team/settings/", {"review": "sometimes", "secrets": "refuse"})
    assert bad.status_code == 400 and "sometimes" in bad.content.decode()
    namespace.refresh_from_db()
    assert namespace.review == "all"

    editor = _client("ed", namespace, "editor")
    refused = editor.post("/ns/team/settings/", {"review": "off", "secrets": "refuse"})
    assert refused.status_code in (403, 404)
    namespace.refresh_from_db()
    assert namespace.review == "all"
