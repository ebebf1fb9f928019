"""The dialog context window: a turn borrows from the turns up to two away (issue 11).

In a dialog of two speakers the turn two back is the same speaker's previous turn; the answer
to "What inspired the painting?" is often the speaker's next turn after the one that names the
painting, with the other speaker's reaction in between.
"""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.search.pipeline import candidates, context
from apps.search.pipeline.context import Chain
from apps.search.services import search
from apps.transfer.transfer import import_records

pytestmark = pytest.mark.django_db


def _line(ids: str, *, breaks: str = "", sessions: str = "") -> Chain:
    """A line of memories (one letter each), linked but after the letters in `breaks`; each
    its own session unless `sessions` gives one digit each."""
    linked = np.array([k not in breaks for k in ids[:-1]] + [False])
    session = np.array([int(d) for d in sessions] if sessions else range(len(ids)))
    return Chain(list(ids), {k: i for i, k in enumerate(ids)}, linked, session)


def _windows(chain: Chain, reach: int = 2) -> dict[str, tuple[str, ...]]:
    found = chain.windows(chain.ids, reach)
    return {
        k: tuple(chain.ids[i] for i in row if i >= 0)
        for k, row in zip(chain.ids, found, strict=True)
    }


ADJACENT = {"a": ("b",), "b": ("a", "c"), "c": ("b", "d"), "d": ("c", "e"), "e": ("d",)}


def test_window_reaches_two_turns_each_way_nearest_first():
    one_session = _line("abcde", sessions="00000")
    out = _windows(one_session)
    assert out["c"] == ("b", "d", "a", "e")
    assert out["a"] == ("b", "c")
    assert _windows(one_session, reach=1) == ADJACENT


def test_beyond_the_adjacent_turns_the_window_stays_in_the_session():
    # notes written a minute apart (each its own timestamp): only the note before and after
    assert _windows(_line("abcde")) == ADJACENT
    # c, d, e are turns of one session, a and b of another an hour earlier
    sessions = _windows(_line("abcde", sessions="11222"))
    assert sessions["c"] == ("b", "d", "e")
    assert sessions["b"] == ("a", "c")


def test_window_never_contains_the_memory_itself_or_crosses_a_break():
    broken = _line("abcd", breaks="b", sessions="0000")  # two sessions' turns, hours apart
    assert _windows(broken) == {"a": ("b",), "b": ("a",), "c": ("d",), "d": ("c",)}
    far = _windows(_line("abcde", sessions="00000"), reach=4)
    assert all(key not in found for key, found in far.items())
    assert far["a"] == ("b", "c", "d", "e")


def test_the_windows_as_positions_among_the_candidates():
    chain = _line("abcde", sessions="00000")
    # "x" is not on the line; "e" is on it but not a candidate: 3 = outside, 4 = none
    rows = chain.rows(["c", "a", "x"], reach=2)
    assert rows.tolist() == [[3, 3, 1, 3], [4, 3, 4, 0], [4, 4, 4, 4]]
    assert chain.missing(["c", "x"], {"c": 1, "d": 1}, reach=2) == ["b", "a", "e"]


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


def _rank(namespace: str, query: str, external_id: str) -> int:
    from apps.memories.models import Memory

    target = str(Memory.objects.get(external_id=external_id).id)
    # The context window alone: previous-turn passages would carry the same neighbour's words.
    response = search(
        namespace=namespace, query=query, limit=20, log=False, disabled_stages=["previous_turn"]
    )
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


def _searched(namespace: str, query: str) -> tuple[list[tuple[str, float]], int]:
    """The results (text, score) and how many row fetches the search sent."""
    with CaptureQueriesContext(connection) as captured:
        response = search(namespace=namespace, query=query, limit=20, log=False)
    fetches = sum(
        q["sql"].startswith("SELECT m.id::text, m.created_at, m.external_id")
        for q in captured.captured_queries
    )
    return [(m["content"], m["score"]) for m in response.memories], fetches


def test_a_kept_namespace_reads_the_context_turns_with_the_candidates(
    embedding_model, monkeypatch, settings
):
    # Two hits a strategy: the candidates' context turns lie outside the pool.
    monkeypatch.setattr(candidates, "POOL", 2)
    reads: list[int] = []  # the row fetch's calls, by how many rows each asked for
    fetch = candidates.fetch_rows
    monkeypatch.setattr(
        candidates, "fetch_rows", lambda ids, *a, **k: reads.append(len(ids)) or fetch(ids, *a, **k)
    )
    query = "What inspired the painting for the art show?"
    _import("dialog-in-sql")
    kept_rows = settings.SEARCH_VECTOR_CACHE_ROWS
    settings.SEARCH_VECTOR_CACHE_ROWS = 1  # too large to keep: read in SQL from now on
    in_sql, sql_fetches = _searched("dialog-in-sql", query)
    settings.SEARCH_VECTOR_CACHE_ROWS = kept_rows
    _import("dialog")
    search(namespace="dialog", query=query, log=False)  # the process keeps the namespace now
    reads.clear()
    kept, kept_fetches = _searched("dialog", query)
    # In SQL the window is known after the candidates' rows, and its turns are a second fetch;
    # a kept namespace knows it first and reads them with the candidates, in one call, from
    # the process (no statement).
    assert (kept_fetches, sql_fetches) == (0, 2)
    assert len(reads) == 1 and reads[0] > 2 * 2
    assert [text for text, _ in kept] == [text for text, _ in in_sql]
    assert [score for _, score in kept] == pytest.approx([score for _, score in in_sql], abs=1e-5)
