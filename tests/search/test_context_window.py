"""The dialog context window: a turn borrows from the turns up to two away (issue 11).

In a dialog of two speakers the turn two back is the same speaker's previous turn; the answer
to "What inspired the painting?" is often the speaker's next turn after the one that names the
painting, with the other speaker's reaction in between.
"""

from __future__ import annotations

import pytest

from apps.memories.models import Memory
from apps.memories.transfer import import_records
from apps.search.pipeline import context, retrieve
from apps.search.pipeline.context import window, window_lexical
from apps.search.pipeline.retrieve import LexicalPlan
from apps.search.services import search

pytestmark = pytest.mark.django_db

CHAIN = {"a": ("b",), "b": ("a", "c"), "c": ("b", "d"), "d": ("c", "e"), "e": ("d",)}


def test_window_reaches_two_turns_each_way_nearest_first():
    out = window(CHAIN)
    assert out["c"] == ("b", "d", "a", "e")
    assert out["a"] == ("b", "c")
    assert window(CHAIN, reach=1) == CHAIN


def test_beyond_the_adjacent_turns_the_window_stays_in_the_session():
    # notes written a minute apart (each its own timestamp): only the note before and after
    notes = {key: n for n, key in enumerate(CHAIN)}
    assert window(CHAIN, sessions=notes) == CHAIN
    # c, d, e are turns of one session, a and b of another an hour earlier
    sessions = {"a": 1, "b": 1, "c": 2, "d": 2, "e": 2}
    assert window(CHAIN, sessions=sessions)["c"] == ("b", "d", "e")
    assert window(CHAIN, sessions=sessions)["b"] == ("a", "c")


def test_window_never_contains_the_memory_itself_or_crosses_a_break():
    broken = {"a": ("b",), "b": ("a",), "c": ("d",), "d": ("c",)}  # two sessions
    assert window(broken) == broken
    assert all(key not in found for key, found in window(CHAIN, reach=4).items())
    assert window(CHAIN, reach=4)["a"] == ("b", "c", "d", "e")


SESSION = [
    "Caroline: Hey Mel! How was your week?",
    "Melanie: Busy! Check out the painting I made for the art show next month!",
    "Caroline: Wow, those colours are lovely.",
    "Melanie: Thanks! I did it after a trip to the community garden; everyone there was so "
    "welcoming and it stuck with me.",
    "Caroline: That sounds like a wonderful place to visit.",
    "Melanie: Anyway, I have to run and cook dinner now.",
]
OTHER = [
    "Caroline: The dog barked at the mail carrier again this morning.",
    "Melanie: My kids love the beach in summer.",
    "Caroline: I read a novel about a lighthouse keeper.",
    "Melanie: Soccer practice ran late again this evening.",
]


def _import(namespace: str) -> None:
    records = [
        {"id": f"{namespace}:D1:{i}", "namespace": namespace, "content": text,
         "created_at": "2023-05-08T13:56:00", "tags": ["session-1", text.split(":")[0].lower()]}
        for i, text in enumerate(SESSION, start=1)
    ] + [
        {"id": f"{namespace}:D2:{i}", "namespace": namespace, "content": text,
         "created_at": "2023-06-20T10:00:00", "tags": ["session-2", text.split(":")[0].lower()]}
        for i, text in enumerate(OTHER, start=1)
    ]  # fmt: skip
    import_records(records, progress=False)


def _rank(namespace: str, query: str, external_id: str, **extra) -> int:
    from apps.memories.models import Memory

    target = str(Memory.objects.get(external_id=external_id).id)
    response = search(namespace=namespace, query=query, limit=20, log=False, **extra)
    ids = [m["id"] for m in response.memories]
    return ids.index(target) + 1 if target in ids else 99


def test_the_speakers_next_turn_borrows_from_the_turn_two_back(embedding_model, monkeypatch):
    _import("dialog")
    query = "What inspired the painting for the art show?"
    assert _rank("dialog", query, "dialog:D1:2") == 1  # the turn that names the painting
    answer = _rank("dialog", query, "dialog:D1:4")  # the speaker's next turn: the answer
    monkeypatch.setattr(context, "CONTEXT_REACH", 1)
    one_turn = _rank("dialog", query, "dialog:D1:4")
    assert answer <= 3 < one_turn


# --- the keyword score read with the adjacent turns' words ----------------------------------


def test_window_lexical_adds_the_terms_only_the_neighbours_hold():
    plan = LexicalPlan(("celebr", "tournament", "win"), (1.0, 2.0, 3.0), avgdl=10.0)
    rows = {
        "congrats": {"lexical": 5.0, "terms": frozenset({1, 2}), "length": 10},
        "answer": {"lexical": 0.0, "terms": frozenset(), "length": 10},
        "partly": {"lexical": 2.0, "terms": frozenset({1}), "length": 10},
        "alone": {"lexical": 0.0, "terms": frozenset(), "length": 10},
    }
    neighbours = {"answer": ("congrats",), "partly": ("congrats",), "congrats": ("answer",)}
    out = window_lexical(rows, neighbours, plan, share=0.3)
    assert plan.length_norm(10) == pytest.approx(1.0)  # average length: BM25 leaves it
    assert out["answer"] == pytest.approx(0.3 * (2.0 + 3.0))
    assert out["partly"] == pytest.approx(2.0 + 0.3 * 3.0)  # its own term is not counted twice
    assert out["congrats"] == 5.0 and out["alone"] == 0.0


CELEBRATION = [
    "Joanna: Congrats on winning the international tournament, Nate! You earned it.",
    "Nate: Thanks! I'm taking some time off this weekend to chill with my pets.",
    "Joanna: That sounds so relaxing, enjoy it.",
]
TOURNAMENT_TALK = [
    "Nate: I practice for the tournament every single evening.",
    "Joanna: How many hours do you practice?",
    "Nate: About four, and my team meets on Sundays.",
    "Joanna: My screenplay is almost done.",
    "Nate: The last tournament was tough, we lost in the final.",
]


def test_a_reply_without_the_questions_words_is_read_with_its_neighbour(embedding_model):
    records = [
        {"id": f"talk:D1:{i}", "namespace": "talk", "content": text,
         "created_at": "2022-02-01T10:00:00", "tags": [text.split(":")[0].lower()]}
        for i, text in enumerate(TOURNAMENT_TALK, start=1)
    ] + [
        {"id": f"talk:D2:{i}", "namespace": "talk", "content": text,
         "created_at": "2022-03-01T10:00:00", "tags": [text.split(":")[0].lower()]}
        for i, text in enumerate(CELEBRATION, start=1)
    ]  # fmt: skip
    import_records(records, progress=False)
    query = "How did Nate celebrate winning the international tournament?"
    memories = {m.external_id: str(m.id) for m in Memory.objects.filter(namespace__name="talk")}
    congrats, reply = memories["talk:D2:1"], memories["talk:D2:2"]
    plan = retrieve.lexical_plan(query, Memory.objects.get(pk=reply).namespace_id)
    rows = retrieve.fetch_rows([congrats, reply], plan)
    own = rows[reply]["terms"]
    assert {plan.lexemes[i] for i in own} == {"nate"}  # only its speaker's name
    assert {"win", "intern", "tournament"} <= {plan.lexemes[i] for i in rows[congrats]["terms"]}
    scores = window_lexical(rows, {reply: (congrats,), congrats: (reply,)}, plan)
    borrowed = sum(plan.idf[i] for i in rows[congrats]["terms"] - own)
    norm = plan.length_norm(rows[reply]["length"])
    expected = rows[reply]["lexical"] + context.CONTEXT_SHARE * borrowed * norm
    assert scores[reply] == pytest.approx(expected) and borrowed > 0
    assert scores[congrats] == pytest.approx(rows[congrats]["lexical"])  # nothing new nearby
    by_score = {"disabled_stages": ["mmr"]}  # the boosted order itself
    assert _rank("talk", query, "talk:D2:1", **by_score) == 1
    answer = _rank("talk", query, "talk:D2:2", **by_score)  # the reply: no word of the query
    # above the turns of the other session that hold no query word either: those borrow from
    # the tournament turns around them through the context stage alone, and so did the reply
    others = [_rank("talk", query, f"talk:D1:{i}", **by_score) for i in (2, 3, 4)]
    assert answer < min(others)


def test_same_session_keeps_only_the_turns_of_the_memorys_session():
    sessions = {"a": 1, "b": 1, "c": 2, "d": 2, "e": 2}
    assert context.same_session(CHAIN, sessions) == {
        "a": ("b",), "b": ("a",), "c": ("d",), "d": ("c", "e"), "e": ("d",)
    }  # fmt: skip
    assert context.same_session(CHAIN, {key: n for n, key in enumerate(CHAIN)}) == {}
