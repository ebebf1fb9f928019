"""A memory that is a question counts 0.8 of its score (issue 11): it shares the words of a
question about its topic but holds no answer; the answer is the turn after it."""

from __future__ import annotations

import pytest

from apps.search.pipeline.boost import QUESTION_FACTOR, question_turns
from apps.search.services import search
from apps.transfer.transfer import import_records
from tests.factories import ranked

pytestmark = pytest.mark.django_db


def test_only_questions_count_less_and_the_boost_is_recorded():
    items = [ranked("asks", 1.0, asks=True), ranked("tells", 0.9)]
    out = question_turns(items)
    assert out[0].score == pytest.approx(QUESTION_FACTOR) and out[0].reasons == ("question",)
    assert out[0].boosts == (("question", QUESTION_FACTOR),)
    assert out[1] is items[1]


DIALOG = [
    "Caroline: I started learning the guitar last month, it is hard but fun.",
    "Melanie: Cool! What type of music do you play?",
    "Caroline: Mostly folk music and some classical pieces from my grandmother.",
    "Melanie: Lovely. My kids keep me busy with soccer these days.",
    "Caroline: Music helps me relax after work.",
]


def _order(**extra) -> list[str]:
    from apps.memories.models import Memory

    external = {str(m.id): m.external_id for m in Memory.objects.all()}
    response = search(
        namespace="chat", query="What type of music does Caroline play?", log=False, **extra
    )
    return [external[m["id"]] for m in response.memories]


def test_the_answer_ranks_above_the_question_that_echoes_the_query(embedding_model):
    records = [
        {"id": f"chat:D1:{i}", "namespace": "chat", "content": text,
         "created_at": "2023-05-08T13:56:00", "tags": [text.split(":")[0].lower()]}
        for i, text in enumerate(DIALOG, start=1)
    ]  # fmt: skip
    import_records(records, progress=False)
    # The question rule alone: the answer's previous-turn passage holds the question's words.
    found = _order(disabled_stages=["previous_turn"])
    plain = _order(disabled_stages=["questions", "previous_turn"])
    assert plain.index("chat:D1:2") < plain.index("chat:D1:3")  # the question wins on words
    assert found.index("chat:D1:3") < found.index("chat:D1:2")
    assert "chat:D1:2" in found  # counted less, not dropped
