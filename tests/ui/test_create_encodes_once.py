"""The create form embeds a new text once: the write that looks for duplicates is the write
that stores the memory (rolled back only when a duplicate asks the person to choose)."""

from __future__ import annotations

import pytest

from apps.memories import embeddings
from apps.memories.models import Memory

pytestmark = pytest.mark.django_db


@pytest.fixture
def encoded(monkeypatch):
    """The texts handed to the real encoder (it still runs; this only counts)."""
    seen: list[str] = []
    real = embeddings.embed_texts

    def counting(texts, **kwargs):
        seen.extend(texts)
        return real(texts, **kwargs)

    monkeypatch.setattr(embeddings, "embed_texts", counting)
    return seen


def test_creating_a_memory_encodes_its_text_once(admin_client, namespace, embedding_model, encoded):
    text = "The staging database is restored from the nightly backup every Monday."
    response = admin_client.post(
        f"/ns/{namespace.name}/memories/new/", {"content": text, "title": "", "tags": ""}
    )
    assert response.status_code == 302
    assert Memory.objects.filter(namespace=namespace, content=text).count() == 1
    assert sum(text in t for t in encoded) == 1


def test_a_near_duplicate_is_rolled_back_until_the_person_chooses(
    admin_client, namespace, embedding_model
):
    url = f"/ns/{namespace.name}/memories/new/"
    admin_client.post(url, {"content": "We deploy every Tuesday afternoon.", "tags": ""})
    twin = "We deploy on Tuesday afternoons."
    response = admin_client.post(url, {"content": twin, "tags": ""})
    assert response.status_code == 200 and b"on_duplicate" in response.content
    assert not Memory.objects.filter(content=twin).exists()
    admin_client.post(url, {"content": twin, "tags": "", "on_duplicate": "keep"})
    assert Memory.objects.filter(content=twin).exists()
