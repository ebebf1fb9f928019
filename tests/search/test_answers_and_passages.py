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


@pytest.mark.django_db
def test_the_namespace_scan_scores_each_memory_by_its_own_passages_only(remember):
    """The exact scan of a whole namespace reads its passages in one pass: each memory gets
    the same evidence as when its passages are read one memory at a time (a filtered scan);
    another namespace's memories, with the very sentence asked for, stay out."""
    from datetime import timedelta

    from apps.memories.services import namespace_get_or_create
    from apps.search.pipeline.scope import Scope
    from apps.vectors import nearest
    from apps.vectors.embeddings import embed_query

    texts = [
        DIALOG[0],
        "Melanie: I photographed the sunrise over the lake last summer. Then we had breakfast.",
        "Caroline: The deploy failed twice. The sunrise was lovely though.",
    ]
    mine = remember(texts)
    other = namespace_get_or_create(name="elsewhere")
    remember(["Note: I painted the sunrise over the lake. Exactly that, and nothing else."], other)
    vector = embed_query("painted the sunrise over the lake")
    whole = Scope(namespace_id=mine[0].namespace_id)
    always = Scope(namespace_id=mine[0].namespace_id, after=SESSION - timedelta(days=36500))
    assert not whole.filtered and always.filtered  # the two ways of reading passages
    literal = nearest.vector_literal(vector)
    for passages in (retrieve.PASSAGE_COSINE, retrieve.SENTENCE_COSINE):
        in_one_pass = retrieve.exact_nearest(whole, literal, 10, passages)
        one_by_one = retrieve.exact_nearest(always, literal, 10, passages)
        assert [i for i, _ in in_one_pass] == [i for i, _ in one_by_one]
        assert [s for _, s in in_one_pass] == pytest.approx([s for _, s in one_by_one], abs=1e-9)
        assert {i for i, _ in in_one_pass} == {str(m.id) for m in mine}
    painted = retrieve.exact_nearest(whole, literal, 1, retrieve.PASSAGE_COSINE)
    assert painted[0][0] == str(mine[0].id)


@pytest.mark.django_db
def test_passages_carry_their_memorys_namespace_and_follow_it(remember):
    """Whatever writes a passage, the database gives it its memory's namespace; a memory that
    moves takes its passages along, and is found by them in its new namespace."""
    from apps.memories.services import namespace_get_or_create
    from apps.search.pipeline.scope import Scope
    from apps.vectors import nearest
    from apps.vectors.embeddings import embed_query

    (memory,) = remember([DIALOG[0]])
    passages = Passage.objects.filter(memory=memory)
    assert passages.count() == 4
    assert set(passages.values_list("namespace_id", flat=True)) == {memory.namespace_id}
    # A row written without the column (a bulk load, another tool) gets it as well.
    first = passages.first()
    Passage.objects.create(memory=memory, position=9, embedding=first.embedding)
    assert not Passage.objects.filter(memory=memory, namespace__isnull=True).exists()

    moved_to = namespace_get_or_create(name="moved")
    Memory.objects.filter(pk=memory.pk).update(namespace=moved_to)
    assert set(passages.values_list("namespace_id", flat=True)) == {moved_to.pk}
    vector = nearest.vector_literal(embed_query("painted the sunrise over the lake"))
    found = retrieve.exact_nearest(
        Scope(namespace_id=moved_to.pk), vector, 1, retrieve.PASSAGE_COSINE
    )
    own = retrieve.exact_nearest(Scope(namespace_id=moved_to.pk), vector, 1)
    assert found[0][0] == str(memory.id) and found[0][1] > own[0][1]
