"""The create page shows what is already stored (the same text, near-duplicates) before it
writes, and a create through it runs the encoder once per text: the preview's encoding is the
one the create stores (counted on the real encoder through a spy that calls it)."""

from __future__ import annotations

import pytest
from django.test import Client

from apps.memories import services
from apps.memories.models import Memory, Passage
from apps.vectors import embeddings

from .conftest import PASSWORD, make_user

pytestmark = pytest.mark.django_db

ORIGINAL = "The cache is invalidated on every write. Readers see new values within a minute."
AGAIN = "The cache is invalidated on every write. Readers see new values within one minute."
FORM = {"category": "note", "tier": "normal", "importance": "0.5"}


@pytest.fixture
def encoded(monkeypatch, embedding_model) -> list[str]:
    """Every text the write path's encoder is asked for, in order; the encoder still runs."""
    texts: list[str] = []
    real = embeddings.embed_with_passages

    def spy(batch, spans, **kwargs):
        texts.extend(batch)
        return real(batch, spans, **kwargs)

    monkeypatch.setattr(embeddings, "embed_with_passages", spy)
    return texts


@pytest.fixture
def writer(namespace) -> Client:
    make_user("root", superuser=True)
    client = Client()
    assert client.login(username="root", password=PASSWORD)
    return client


def _create(client: Client, namespace, **fields):
    return client.post(f"/ns/{namespace.name}/memories/new/", {**FORM, **fields})


def test_a_create_through_the_page_embeds_its_text_once(writer, namespace, encoded):
    response = _create(writer, namespace, title="Caching", content=ORIGINAL)
    assert response.status_code == 302
    memory = Memory.objects.get(namespace=namespace, content=ORIGINAL)
    assert [t for t in encoded if ORIGINAL in t] == ["Caching\n" + ORIGINAL]
    assert memory.embedding is not None
    assert Passage.objects.filter(memory=memory).count() == 2  # its two sentences, kept too


def test_a_long_document_embeds_each_chunk_once(writer, namespace, encoded, settings):
    settings.MEMORY_CHUNK_MAX_CHARS = 120
    content = "\n\n".join(f"## Part {i}\n\n{ORIGINAL} Part {i} says so." for i in range(3))
    assert _create(writer, namespace, content=content).status_code == 302
    assert Memory.objects.filter(namespace=namespace, metadata__chunk_count=3).count() == 3
    assert len(encoded) == 3 and len(set(encoded)) == 3


def test_a_near_duplicate_is_shown_first_and_kept_on_request_with_one_encoding(
    writer, namespace, encoded
):
    services.memory_create(namespace=namespace, content=ORIGINAL)
    encoded.clear()
    shown = _create(writer, namespace, content=AGAIN)
    assert shown.status_code == 200
    assert "Near-duplicates found" in shown.content.decode()
    assert not Memory.objects.filter(content=AGAIN).exists()  # nothing written yet

    kept = _create(writer, namespace, content=AGAIN, on_duplicate="keep")
    assert kept.status_code == 302
    assert Memory.objects.filter(namespace=namespace, content=AGAIN).exists()
    assert encoded == [AGAIN]  # the preview's encoding served the create


def test_the_same_text_is_named_without_running_the_encoder(writer, namespace, encoded):
    stored = services.memory_create(namespace=namespace, content=ORIGINAL).memory
    encoded.clear()
    page = _create(writer, namespace, content=ORIGINAL).content.decode()
    assert "Exact duplicate." in page and str(stored.pk) in page
    assert encoded == []


def test_a_bad_field_is_named_on_the_form_before_any_encoding(writer, namespace, encoded):
    response = _create(writer, namespace, content=ORIGINAL, supersedes="not-an-id")
    assert response.status_code == 400
    assert "supersedes" in response.content.decode().lower()
    assert encoded == []
