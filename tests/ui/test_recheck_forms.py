"""The create and edit pages take caused_by / depends_on (issue 44): links drawn through the
write path, a bad id shown next to its field with nothing written; the Re-check queue's
confirm is a queue decision its undo takes back, and a reader may not act on it."""

from __future__ import annotations

import pytest
from django.test import Client

from apps.access.services import membership_set
from apps.history.models import MemoryRevision
from apps.memories.models import CausalEdge, Memory, RecheckMark
from apps.memories.services import memory_create, memory_delete
from apps.queues.services import decision_undo, decision_undoable

from .conftest import PASSWORD, make_user

pytestmark = pytest.mark.django_db

FORM = {"category": "decision", "tier": "normal", "importance": "0.5"}


@pytest.fixture
def writer(namespace) -> Client:
    make_user("root", superuser=True)
    client = Client()
    assert client.login(username="root", password=PASSWORD)
    return client


def test_create_and_edit_pages_draw_links(writer, namespace, embedding_model):
    outage = memory_create(namespace=namespace, content="Jenkins was down for two days.").memory
    fact = memory_create(namespace=namespace, content="CI runners use ubuntu-22.").memory
    response = writer.post(
        f"/ns/{namespace.name}/memories/new/",
        {**FORM, "content": "We moved CI to GitHub Actions.", "caused_by": str(outage.pk)},
    )
    assert response.status_code == 302
    decision = Memory.objects.get(content="We moved CI to GitHub Actions.")
    assert CausalEdge.objects.filter(source=outage, target=decision, relation="caused").exists()

    page = writer.get(f"/memories/{decision.pk}/edit/")
    assert 'name="depends_on"' in page.content.decode()
    edited = writer.post(
        f"/memories/{decision.pk}/edit/",
        {
            **FORM,
            "content": decision.content,
            "version": decision.version,
            "depends_on": str(fact.pk),
        },
    )
    assert edited.status_code == 302
    assert CausalEdge.objects.filter(source=decision, target=fact, relation="depends_on").exists()


def test_a_bad_link_id_is_shown_on_its_field_and_nothing_is_written(writer, namespace):
    before = Memory.objects.count()
    response = writer.post(
        f"/ns/{namespace.name}/memories/new/",
        {**FORM, "content": "Rests on nothing known.", "depends_on": "not-an-id"},
    )
    assert response.status_code == 400
    assert "depends_on" in response.context["form"].errors
    assert Memory.objects.count() == before


def test_confirm_is_a_decision_its_undo_takes_back(writer, namespace, embedding_model):
    fact = memory_create(namespace=namespace, content="Staging runs Postgres 14.").memory
    step = memory_create(
        namespace=namespace, content="Use the pg14 list.", depends_on=[str(fact.pk)]
    ).memory
    memory_delete(memory=fact)
    page = writer.get(f"/ns/{namespace.name}/queues/recheck/")
    assert str(step.pk) in page.content.decode() and "deleted" in page.content.decode()
    detail = writer.get(f"/memories/{step.pk}/").content.decode()
    assert "Re-check: its basis changed on" in detail

    response = writer.post(
        f"/ns/{namespace.name}/queues/recheck/act/", {"row": f"confirm:{step.pk}"}
    )
    assert response.status_code == 302 and "confirmed=" in response["Location"]
    assert not RecheckMark.objects.filter(memory=step).exists()
    revision = MemoryRevision.objects.filter(memory_id=step.pk, action="decision").latest("id")
    assert decision_undoable(revision)
    decision_undo(revision=revision, door="ui")
    assert RecheckMark.objects.filter(memory=step, basis_id=fact.pk, reason="deleted").exists()
    assert not decision_undoable(revision)  # undone once


def test_a_reader_cannot_act_on_the_queue(namespace, embedding_model):
    fact = memory_create(namespace=namespace, content="Staging runs Postgres 14.").memory
    step = memory_create(
        namespace=namespace, content="Use the pg14 list.", depends_on=[str(fact.pk)]
    ).memory
    memory_delete(memory=fact)
    reader = make_user("reader")
    membership_set(user=reader, namespace=namespace, role="viewer")
    client = Client()
    assert client.login(username="reader", password=PASSWORD)
    assert client.get(f"/ns/{namespace.name}/queues/recheck/").status_code == 200
    refused = client.post(
        f"/ns/{namespace.name}/queues/recheck/act/", {"row": f"confirm:{step.pk}"}
    )
    assert refused.status_code in (403, 404)
    assert RecheckMark.objects.filter(memory=step).exists()


def test_an_edit_opened_from_the_queue_also_confirms(writer, namespace, embedding_model):
    fact = memory_create(namespace=namespace, content="Staging runs Postgres 14.").memory
    step = memory_create(
        namespace=namespace, content="Use the pg14 list.", depends_on=[str(fact.pk)]
    ).memory
    memory_delete(memory=fact)
    queue = writer.get(f"/ns/{namespace.name}/queues/recheck/").content.decode()
    assert f"/memories/{step.pk}/edit/?recheck=1" in queue
    form = writer.get(f"/memories/{step.pk}/edit/?recheck=1").content.decode()
    assert 'name="recheck" value="1"' in form
    step.refresh_from_db()
    saved = writer.post(
        f"/memories/{step.pk}/edit/",
        {
            **FORM,
            "category": step.category,
            "content": "Use the pg16 list.",
            "version": step.version,
            "recheck": "1",
        },
    )
    assert saved.status_code == 302
    assert not RecheckMark.objects.filter(memory=step).exists()
    step.refresh_from_db()
    assert step.content == "Use the pg16 list."
    # Two revisions, each with its undo: the edit and the re-check decision.
    actions = set(MemoryRevision.objects.filter(memory_id=step.pk).values_list("action", flat=True))
    assert {"update", "decision"} <= actions
