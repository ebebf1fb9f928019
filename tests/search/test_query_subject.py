"""Issue 11, sixth session: of two people a question names, the entity boost goes to the one it
asks about ("What did Jon say about Gina's store?" is answered by Jon's turns)."""

from __future__ import annotations

import pytest

from apps.memories.models import Memory
from apps.search.pipeline.analyse import subject_of
from apps.search.services import search
from tests.factories import import_dialog

TAGS = ("jon", "gina")


@pytest.mark.parametrize(
    "question, subject",
    [
        ("What did Jon say about Gina's progress with her store?", "jon"),
        ("What does Gina say to Jon about the grand opening?", "gina"),
        ("What book did Gina read from Jon's suggestion?", "gina"),
        ("Jon told Gina what?", "jon"),
        ("How do Jon and Gina both like to destress?", None),  # both
        ("What do Gina & Jon have in common?", None),
    ],
)
def test_the_person_a_question_asks_about(question, subject):
    assert subject_of(question, TAGS) == subject


def test_one_name_is_no_choice():
    assert subject_of("What did Jon say?", ("jon",)) is None


DIALOG = [
    "Gina: Jon said my store looks great. The store is growing and I love the store.",
    "Jon: Your store looks awesome, hard work pays off.",
    "Gina: Thanks!",
]


@pytest.mark.django_db
def test_the_subjects_own_turn_answers(embedding_model):
    import_dialog(DIALOG)
    ids = {m.external_id: str(m.id) for m in Memory.objects.all()}
    question = "What did Jon say about Gina's store?"
    # Gina's turn holds more of the question's words; boosting both names would keep it first.
    plain = search(namespace="chat", query=question, log=False, disabled_stages=["entity_boost"])
    assert plain.memories[0]["id"] == ids["chat:D1:1"]
    assert search(namespace="chat", query=question, log=False).memories[0]["id"] == ids["chat:D1:2"]
