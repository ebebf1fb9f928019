"""Pages speak in words: memories without a title are named by their first words (a dialog turn
by its speaker too), history and explain name memories by title, counts are pluralised, and
markdown is rendered the same way everywhere."""

from __future__ import annotations

import pytest
from django.template.loader import render_to_string
from django.test import Client

from apps.memories import services
from apps.memories.models import Memory
from apps.memories.titles import shown_title
from apps.search.selectors import evidence_gap_model
from apps.ui.views.search import _titles, reordered

from .conftest import PASSWORD, make_user, seed_namespace

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("title", "content", "speaker", "shown"),
    [
        ("Deploy rules", "anything", "", "Deploy rules"),
        ("", "Caroline: Hey Mel! Good to see you! How have you been?", "",
         "Caroline: Hey Mel! Good to see you! How have…"),
        ("", "I went to a support group yesterday.", "Caroline",
         "Caroline: I went to a support group yesterday."),
        ("", "We decided to keep **sessions in Redis** (db 1) with a 14-day TTL.", "",
         "We decided to keep sessions in Redis (db…"),
        ("", "# Operations handbook\n\n## Deploys", "", "Operations handbook Deploys"),
        ("", "x" * 300, "", "x" * 80 + "…"),
    ],
)  # fmt: skip
def test_shown_title(title, content, speaker, shown):
    assert shown_title(title, content, speaker) == shown


@pytest.fixture
def client_in(db, embedding_model):
    namespace = seed_namespace("acme")
    make_user("root", superuser=True)
    client = Client()
    client.login(username="root", password=PASSWORD)
    return namespace, client


def test_a_merge_and_a_link_are_named_by_title_in_history(client_in):
    namespace, client = client_in
    keep = Memory.objects.get(namespace=namespace, title="Use Redis for the session cache")
    other = services.memory_create(
        namespace=namespace, content="Melanie: Sessions sit in Redis db 1 for two weeks."
    ).memory
    services.memories_merge(keep=keep, others=[other])
    page = client.get(f"/memories/{keep.pk}/history/").content.decode()
    assert "merged in" in page and "Melanie: Sessions sit in Redis db 1 for two…" in page
    assert "Cache invalidation on write" in page  # the depends_on link's other end
    assert str(other.pk) not in page.replace(f"/memories/{other.pk}/", "")


def test_explain_names_signals_in_words(client_in):
    namespace, client = client_in
    page = client.get("/explain/", {"namespace": "acme", "q": "where do sessions live"})
    text = page.content.decode()
    assert page.status_code == 200
    assert 'id="confidence"' in text
    assert "Meaning match of the best result" in text
    assert "{&#x27;top_cosine&#x27;" not in text and "{'top_cosine'" not in text
    model = evidence_gap_model()  # the weights the page explains are the model's own
    assert f"starts at {model.intercept:.2f}" in text
    assert f'<td class="num">{model.coefficients["top_cosine"]:.2f}</td>' in text


def test_counts_are_pluralised(client_in):
    namespace, client = client_in
    scratch = services.memory_create(namespace=namespace, content="Old scratch", tier="scratch")
    page = client.post(
        "/ns/acme/queues/stale/act/",
        {"row": f"archive:{scratch.memory.pk}", "next": "/ns/acme/queues/stale/"},
        follow=True,
    )
    assert "1 memory." in page.content.decode()


def test_conflicts_render_markdown(client_in):
    namespace, client = client_in
    page = client.get("/ns/acme/queues/conflicts/").content.decode()
    assert "<code>django.contrib.sessions.backends.db</code>" in page
    assert "`django.contrib.sessions.backends.db`" not in page


def test_markdown_tables_align_without_inline_styles(client_in):
    namespace, client = client_in
    memory = services.memory_create(
        namespace=namespace, title="Versions", content="| a | b |\n|:--|--:|\n| 1 | 2 |"
    ).memory
    page = client.get(f"/memories/{memory.pk}/").content.decode()
    assert '<td class="align-right">2</td>' in page
    assert "style=" not in page


def test_results_show_the_rank_beside_the_score(client_in):
    namespace, client = client_in
    page = client.get("/", {"namespace": "acme", "q": "where do sessions live"}).content.decode()
    assert 'class="score" title="rank 1, final score' in page
    assert ">#1 · " in page and ">#2 · " in page


def test_a_reordered_list_says_why_its_scores_are_not_in_order():
    memories = [{"score": s} for s in (1.857, 1.612, 1.607, 1.625)]
    assert reordered(memories) and not reordered(sorted(memories, key=lambda m: -m["score"]))
    response = type("R", (), {"total": 4, "mode": "hybrid", "flags": {}, "query_log_id": None})
    html = render_to_string(
        "ui/search/partials/results.html",
        {"response": response, "results": [], "reordered": True, "query_string": "q=x"},
    )
    assert "a lower score can come first" in html


def test_explain_names_a_result_that_mmr_moved_out_by_its_title(client_in):
    namespace, _ = client_in
    dropped = Memory.objects.get(namespace=namespace, title="Embeddings are normalised")
    kept = {"id": "x", "title": "", "content": "Ana: kept in the list"}
    titles = _titles([kept], {"mmr": [{"id": str(dropped.pk), "from": 3, "to": None}]})
    assert titles == {"x": "Ana: kept in the list", str(dropped.pk): "Embeddings are normalised"}
