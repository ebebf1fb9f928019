"""Issue 11, sixth session: each turn of a dialog session has a passage of the previous turn
followed by its own, kept true through edits, deletes, undeletes and the backfill."""

from __future__ import annotations

import json
from io import StringIO

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from apps.core.health import run_checks
from apps.history.models import TrashEntry
from apps.history.services import trash_restore
from apps.memories.dialog import pair_text
from apps.memories.models import Memory, Namespace, Passage, PendingTurn
from apps.memories.services import (
    memories_reembed,
    memory_create,
    memory_delete,
    memory_update,
)
from apps.search.pipeline import retrieve
from apps.search.services import search
from apps.vectors.embeddings import embed_query, embed_texts
from tests.factories import import_dialog

pytestmark = pytest.mark.django_db

DIALOG = [
    "Nate: Congrats on finishing your first screenplay! What genre is it?",
    "Joanna: Thanks, Nate! It's a mix of drama and romance!",
    "Nate: Sounds great. I just got a third turtle, by the way.",
]


@pytest.fixture
def turns(embedding_model):
    import_dialog(DIALOG)
    return [Memory.objects.get(external_id=f"chat:D1:{i}") for i in (1, 2, 3)]


def _previous(memory: Memory) -> tuple[str | None, np.ndarray | None]:
    found = Passage.objects.filter(memory=memory, previous__isnull=False).first()
    if found is None:
        return None, None
    return str(found.previous_id), np.asarray(found.embedding)


def _expect(memory: Memory, previous: Memory) -> None:
    memory.refresh_from_db()
    previous.refresh_from_db()
    got_previous, vector = _previous(memory)
    assert got_previous == str(previous.pk)
    assert np.allclose(vector, embed_texts([pair_text(memory, previous)])[0], atol=1e-4)


def test_each_turn_after_the_first_is_read_after_the_one_before(turns):
    first, second, third = turns
    assert _previous(first) == (None, None)
    _expect(second, first)
    _expect(third, second)
    # The short reply means the screenplay's genre only with the question before it.
    vector = embed_query("What genre is Joanna's first screenplay?")
    rows = retrieve.fetch_rows([str(second.pk)], None, vector, passages=retrieve.PASSAGE_COSINE)
    row = rows[str(second.pk)]
    assert row.cosines["passage"] > row.similarity + 0.1


def test_a_note_with_a_time_of_its_own_has_no_previous_turn(namespace, embedding_model):
    memory_create(namespace=namespace, content="Deploys go out on Tuesdays.")
    memory_create(namespace=namespace, content="The staging server runs on port 8080.")
    assert not Passage.objects.filter(previous__isnull=False).exists()


def test_editing_a_turn_rewrites_the_passage_of_the_turn_after_it(turns):
    first, second, third = turns
    memory_update(memory=second, content="Joanna: Thanks! It's a thriller set in Michigan.")
    _expect(second, first)
    _expect(third, second)
    assert "thriller" in pair_text(third, Memory.objects.get(pk=second.pk))


def test_deleting_a_turn_joins_its_neighbours_and_undelete_puts_it_back(turns):
    first, second, third = turns
    second_id = second.pk
    memory_delete(memory=second)
    _expect(third, first)
    trash_restore(entry=TrashEntry.objects.get(memory_id=second_id), door="admin")
    second = Memory.objects.get(pk=second_id)
    _expect(second, first)
    _expect(third, second)


def test_backfill_writes_the_missing_previous_turn_passages_once(turns):
    Passage.objects.filter(previous__isnull=False).delete()
    out = StringIO()
    call_command("backfill_passages", stdout=out, stderr=StringIO())
    assert "2 previous-turn passages stored" in out.getvalue()
    _expect(turns[1], turns[0])
    _expect(turns[2], turns[1])
    again = StringIO()
    call_command("backfill_passages", stdout=again, stderr=StringIO())
    assert "0 previous-turn passages stored" in again.getvalue()


def test_re_embedding_rewrites_each_turns_previous_turn_passage(turns):
    """After a model change every vector is re-embedded, the previous-turn passages too."""
    Passage.objects.filter(previous__isnull=False).update(embedding=[0.0] * 383 + [1.0])
    memories_reembed(memories=Memory.objects.filter(pk__in=[t.pk for t in turns]))
    _expect(turns[1], turns[0])
    _expect(turns[2], turns[1])
    assert Passage.objects.filter(previous__isnull=False).count() == 2


def test_a_large_import_leaves_previous_turns_to_the_job_and_stays_searchable(
    embedding_model, settings, tmp_path
):
    """More turns than DIALOG_PASSAGES_INLINE_MAX: the import stores them (searchable by their
    own vectors) and queues them; the job writes every pair, also across the import's batches,
    and empties the queue; an import that fails queues nothing."""
    settings.DIALOG_PASSAGES_INLINE_MAX = 1
    records = [
        {
            "id": f"chat:D1:{i}",
            "namespace": "chat",
            "content": text,
            "created_at": "2023-05-08T13:56:00",
        }
        for i, text in enumerate(DIALOG, start=1)
    ]
    file = tmp_path / "dialog.jsonl"
    notes = [
        {
            "id": f"kb:{i}",
            "namespace": "chat",
            "content": f"Note {i} about the release plan.",
            "created_at": f"2023-06-0{i}T10:00:00",
        }
        for i in (1, 2)
    ]
    file.write_text("\n".join(json.dumps(r) for r in notes) + "\n")
    out = StringIO()
    call_command("import_memories", str(file), no_progress=True, stdout=out)
    assert PendingTurn.objects.count() == 0  # a time of its own each: no previous turn
    assert "dialog turns" not in out.getvalue()
    file.write_text("\n".join(json.dumps(r) for r in records[:2]) + "\n")
    out = StringIO()
    call_command("import_memories", str(file), no_progress=True, stdout=out)
    assert "2 dialog turns are searchable now" in out.getvalue()
    assert not Passage.objects.filter(previous__isnull=False).exists()
    namespace = Namespace.objects.get(name="chat")
    found = search(namespace=namespace, query="What genre is the screenplay?", log=False)
    dialog_turns = Memory.objects.filter(namespace=namespace, external_id__startswith="chat:")
    assert {str(m.pk) for m in dialog_turns} <= {m["id"] for m in found.memories}

    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(records[2]) + "\n" + json.dumps({"id": "x", "content": ""}) + "\n")
    with pytest.raises(CommandError):
        call_command("import_memories", str(bad), no_progress=True, stdout=StringIO())
    assert PendingTurn.objects.count() == 2

    # The third turn in a later import: the job pairs it with the second.
    file.write_text(json.dumps(records[2]) + "\n")
    call_command("import_memories", str(file), no_progress=True, stdout=StringIO())
    assert PendingTurn.objects.count() == 2  # one turn alone stays inline
    assert run_checks()["dialog_passages"] == {"ok": True, "turns_waiting": 2}  # /healthz
    first, second, third = (Memory.objects.get(external_id=f"chat:D1:{i}") for i in (1, 2, 3))
    _expect(third, second)
    call_command("run_job", "dialog_passages", stdout=StringIO())
    assert PendingTurn.objects.count() == 0
    _expect(second, first)
    _expect(third, second)
    assert Passage.objects.filter(previous__isnull=False).count() == 2
