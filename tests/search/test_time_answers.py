"""Issue 11, sixth session: a question that asks when is answered by the memory that tells of
the event and dates it, so memories that mention a time rank higher for such questions."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from apps.memories.models import Memory
from apps.search.pipeline import retrieve
from apps.search.pipeline.analyse import analyse_query
from apps.search.pipeline.boost import TIME_ANSWER_BOOST, time_answers
from apps.search.services import search
from tests.factories import import_dialog, ranked

DIALOG = [
    "Caroline: The LGBTQ support group was so powerful, I want to go to the support group again.",
    "Melanie: That sounds lovely, Caroline. Tell me everything!",
    "Caroline: I went to the LGBTQ support group yesterday and everyone was so kind.",
    "Melanie: I'm so glad. May I ask how the support group found you?",
]


def test_questions_that_ask_for_a_time_are_recognised():
    def asks_when(text):
        return analyse_query(text, vector=None, model_name="m", now=datetime.now(UTC)).asks_when

    assert asks_when("When did Caroline go to the LGBTQ support group?")
    assert asks_when("what year did John start playing professionally?")
    assert asks_when("How long ago was the trip?")
    assert asks_when("How long has Nate had his first two turtles?")
    assert not asks_when("What did Caroline do when she was sad?")
    assert not asks_when("Where did John go last week?")


def test_only_memories_that_mention_a_time_gain_and_only_in_the_head():
    dated = ranked("a", 0.5)
    plain = ranked("b", 0.6)
    far = ranked("c", 0.1)  # mentions a time too, but below the head
    asked = []

    def mention_times(ids):
        asked.extend(ids)
        return {"a", "c"} & set(ids)

    out = {r.id: r for r in time_answers([dated, plain, far], mention_times, head=2)}
    assert sorted(asked) == ["a", "b"]
    assert out["a"].score == pytest.approx(0.5 * (1 + TIME_ANSWER_BOOST))
    assert "time_answer" in out["a"].reasons
    assert out["b"].score == 0.6 and out["b"].boosts == ()
    assert out["c"].score == 0.1


@pytest.mark.django_db
def test_the_turn_that_dates_the_event_answers_a_when_question(embedding_model):
    import_dialog(DIALOG)
    ids = {m.external_id: str(m.id) for m in Memory.objects.all()}
    dated = retrieve.mention_times(list(ids.values()))
    mentions = {key: i in dated for key, i in ids.items()}
    # "yesterday" is a time; "May I ask" is not the month.
    assert mentions == {
        "chat:D1:1": False,
        "chat:D1:2": False,
        "chat:D1:3": True,
        "chat:D1:4": False,
    }

    question = "When did Caroline go to the LGBTQ support group?"
    # The time rule alone: previous-turn passages would lift the turns after these as well.
    off = ["previous_turn"]
    plain = search(
        namespace="chat", query=question, log=False, disabled_stages=[*off, "time_answers"]
    )
    assert plain.memories[0]["id"] == ids["chat:D1:1"]  # more of the question's words
    answered = search(namespace="chat", query=question, log=False, disabled_stages=off)
    assert answered.memories[0]["id"] == ids["chat:D1:3"]
    # A question that does not ask when is ranked as before.
    what = "What did Caroline say about the LGBTQ support group?"
    assert (
        search(namespace="chat", query=what, log=False).memories
        == search(
            namespace="chat", query=what, log=False, disabled_stages=["time_answers"]
        ).memories
    )
