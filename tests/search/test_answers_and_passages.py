"""Issue 11, fourth session: a memory's best sentence counts as semantic evidence (passages),
and the turn after a question gains what the question lost (answers)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from apps.memories.models import Memory, Passage
from apps.memories.passages import MAX_PASSAGES, passage_texts
from apps.search.pipeline import retrieve
from apps.search.pipeline.boost import QUESTION_FACTOR, answer_turns
from apps.search.services import search
from apps.search.types import Evidence
from tests.factories import import_dialog, ranked

SESSION = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def test_a_single_sentence_has_no_passages():
    assert passage_texts("", "The staging server runs on port 8080") == []
    assert passage_texts("", "Caroline: Hey Mel! ") == []


def test_passages_keep_the_speaker_label_and_split_asides():
    text = "Caroline: Thanks, Mel! I felt powerful giving my talk. [shares a photo of a stage]"
    assert passage_texts("", text) == [
        "Caroline: Thanks, Mel!",
        "Caroline: I felt powerful giving my talk.",
        "Caroline: shares a photo of a stage",
    ]


def test_long_texts_are_grouped_into_at_most_max_passages():
    text = " ".join(f"Sentence number {i} is here." for i in range(30))
    parts = passage_texts("Notes", text)
    assert 1 < len(parts) <= MAX_PASSAGES
    assert all(p.startswith("Notes\n") for p in parts)


def _turn(key, score, ext, asks=False, at=SESSION):
    return ranked(
        key,
        score,
        external_id=ext,
        created_at=at,
        asks=asks,
        evidence=Evidence(lexical=1.0, similarity=0.0),
    )


def test_the_turn_after_a_question_gains_what_the_question_lost():
    asks = _turn("q", 0.8, "D1:2", asks=True)
    answer = _turn("a", 0.5, "D1:3")
    before = _turn("b", 0.5, "D1:1")
    temporal = {"q": ("b", "a"), "a": ("q",), "b": ("q",)}
    out = {r.id: r for r in answer_turns([before, asks, answer], temporal)}
    gain = (1 / QUESTION_FACTOR - 1) * 0.8
    assert out["a"].score == pytest.approx(0.5 + gain)
    assert out["a"].boosts == (("answer", pytest.approx(gain)),) and "answer" in out["a"].reasons
    assert out["b"].score == 0.5  # the turn before a question gains nothing
    assert out["q"].score == 0.8


def test_no_answer_lift_across_sessions_for_questions_or_unreached_turns():
    later = datetime(2023, 5, 9, tzinfo=UTC)
    asks = _turn("q", 0.8, "D1:2", asks=True)
    other_session = _turn("x", 0.5, "D2:1", at=later)
    follow_up = _turn("f", 0.5, "D1:3", asks=True)
    temporal = {"q": ("f", "x"), "f": ("q",), "x": ("q",)}
    out = {r.id: r for r in answer_turns([asks, other_session, follow_up], temporal)}
    assert out["x"].score == 0.5 and out["f"].score == 0.5
    unreached = ranked(
        "a",
        0.5,
        external_id="D1:3",
        created_at=SESSION,
        evidence=Evidence(lexical=0.0, similarity=0.2),
    )
    out = answer_turns([asks, unreached], {"q": ("a",), "a": ("q",)})
    assert out[1].score == 0.5  # fetched only as a neighbour: no lexical match, cosine < 0.3


DIALOG = [
    "Melanie: Thanks, Caroline! It was a long week at work and the kids were sick. "
    "I finally painted the sunrise over the lake that I photographed last summer. "
    "Now I need some sleep.",
    "Caroline: Good morning to you, the weather is nice today.",
    "Caroline: I went to a support group meeting yesterday.",
]


@pytest.mark.django_db
def test_passages_are_written_with_the_memory_and_read_by_the_row_fetch(embedding_model):
    import_dialog(DIALOG)
    long_turn = Memory.objects.get(external_id="chat:D1:1")
    sentences = Passage.objects.filter(previous__isnull=True)
    assert sentences.filter(memory=long_turn).count() == 4
    assert not sentences.filter(memory__external_id="chat:D1:2").exists()
    from apps.vectors.embeddings import embed_query

    vector = embed_query("painted the sunrise over the lake")
    rows = retrieve.fetch_rows([str(long_turn.id)], None, vector, passages=retrieve.PASSAGE_COSINE)
    row = rows[str(long_turn.id)]
    assert row.cosines["passage"] > row.similarity  # the painting sentence beats the whole turn
    response = search(namespace="chat", query="What did Melanie paint?", log=False)
    assert response.memories[0]["id"] == str(long_turn.id)


@pytest.mark.django_db
def test_editing_a_memory_rewrites_its_passages(remember):
    from apps.memories.services import memory_update

    (memory,) = remember(["First sentence about deploys. Second sentence about ports."])
    assert Passage.objects.filter(memory=memory).count() == 2
    memory_update(memory=memory, content="One sentence only now")
    assert not Passage.objects.filter(memory=memory).exists()


@pytest.mark.django_db
def test_passage_vectors_come_from_the_memorys_own_model_call(embedding_model):
    """Late chunking: one forward pass gives the memory's vector (unchanged) and a vector per
    sentence that still means that sentence, with the speaker label in front."""
    import numpy as np

    from apps.memories.passages import embed_memories
    from apps.vectors import embeddings

    memory = Memory(title="", content=DIALOG[0])
    vectors, rows = embed_memories([memory])
    alone = embeddings.embed_texts([DIALOG[0], *passage_texts("", DIALOG[0])])
    assert float(np.dot(vectors[0], alone[0])) == pytest.approx(1.0, abs=1e-5)
    assert [p.position for p in rows] == [0, 1, 2, 3]
    for passage, sentence in zip(rows, alone[1:], strict=True):
        # Each passage means its sentence (embedded alone) better than the whole turn does.
        assert float(sentence @ passage.embedding) > float(sentence @ vectors[0]) + 0.05
    painting = embeddings.embed_query("painted the sunrise over the lake")
    cosines = [float(np.dot(p.embedding, painting)) for p in rows]
    assert max(cosines) == cosines[2] and cosines[2] > float(np.dot(vectors[0], painting))


@pytest.mark.django_db
def test_sentences_cut_off_by_the_models_length_limit_get_no_passage(embedding_model):
    from apps.memories.passages import embed_memories

    long_text = "Note: " + " ".join(f"Sentence {i} talks about topic {i}." for i in range(200))
    _, rows = embed_memories([Memory(title="", content=long_text)])
    # 200 sentences are grouped into 8 passages; the model reads the first 256 tokens only.
    assert 1 <= len(rows) < MAX_PASSAGES
    assert [p.position for p in rows] == list(range(len(rows)))


@pytest.mark.django_db
def test_the_semantic_strategy_finds_a_memory_by_its_best_passage(remember):
    """A memory whose one sentence answers is retrieved, not only rescored once something
    else fetched it: the exact scan ranks it by its best passage."""
    from apps.search.pipeline.scope import Scope
    from apps.vectors.embeddings import embed_query

    long_turn, *_ = remember([
        DIALOG[0],
        "Melanie: I photographed the sunrise over the lake last summer.",
        "Caroline: The sunrise over the lake was beautiful this morning.",
    ])  # fmt: skip
    scope = Scope(namespace_id=long_turn.namespace_id)
    vector = embed_query("painted the sunrise over the lake")
    own, _ = retrieve.semantic_search(scope, vector, 1)
    found, _ = retrieve.semantic_search(scope, vector, 1, passages=retrieve.PASSAGE_COSINE)
    assert own[0].id != str(long_turn.id)  # its own vector averages three other sentences
    assert found[0].id == str(long_turn.id)
    assert found[0].score > own[0].score
