"""Server-side rules of the UI that hold whatever the role model: login, CSRF, 404 for ids."""

from __future__ import annotations

import uuid

import pytest
from django.test import Client

from apps.memories import services
from apps.memories.models import Memory

from .conftest import PASSWORD, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(db):
    make_user("root", superuser=True)
    client = Client()
    assert client.login(username="root", password=PASSWORD)
    return client


@pytest.mark.parametrize(
    "url",
    ["/", "/explain/?q=x", "/ns/test-ns/memories/", "/ns/test-ns/memories/new/",
     "/ns/test-ns/connect/", f"/memories/{uuid.uuid4()}/"],
)  # fmt: skip
def test_anonymous_is_sent_to_login(client, namespace, url):
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith("/login/?next=")


def test_login_page_renders(client):
    response = client.get("/login/")
    assert response.status_code == 200
    assert b'name="csrfmiddlewaretoken"' in response.content


def test_post_without_csrf_token_is_refused(namespace, embedding_model):
    make_user("root2", superuser=True)
    client = Client(enforce_csrf_checks=True)
    client.login(username="root2", password=PASSWORD)
    memory = services.memory_create(namespace=namespace, content="csrf check").memory
    response = client.post(f"/memories/{memory.pk}/delete/")
    assert response.status_code == 403
    assert Memory.objects.filter(pk=memory.pk).exists()


def test_unknown_or_malformed_memory_id_is_404(admin_client):
    assert admin_client.get(f"/memories/{uuid.uuid4()}/").status_code == 404
    assert admin_client.get("/memories/not-a-uuid/").status_code == 404


def test_unknown_namespace_is_404(admin_client):
    assert admin_client.get("/ns/nowhere/memories/").status_code == 404
    assert admin_client.get("/?namespace=nowhere").status_code == 404


def test_search_errors_name_the_field(admin_client, namespace, embedding_model):
    response = admin_client.get("/", {"namespace": namespace.name, "q": "x", "after": "2020-13-45"})
    assert response.status_code == 200
    assert b"after" in response.content and b"error" in response.content


def test_markdown_is_sanitised(admin_client, namespace, embedding_model):
    hostile = (
        "<script>alert(1)</script> [click](javascript:alert(2)) "
        '<img src=x onerror="alert(3)"> **bold**'
    )
    memory = services.memory_create(namespace=namespace, content=hostile).memory
    html = admin_client.get(f"/memories/{memory.pk}/").content.decode()
    body = html.split('class="content md full">', 1)[1].split("</div>", 1)[0]
    # Raw HTML is shown as text, never as markup; the javascript: link is not a link.
    assert "<script" not in body and "<img" not in body and 'href="javascript' not in body
    assert "<strong>bold</strong>" in body
