"""The focus stage: the semantic query without the tag names it mentions."""

from __future__ import annotations

import pytest

from apps.search.pipeline.focus import without_entities
from apps.search.services import search

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("text", "entities", "expected"),
    [
        ("What has Melanie painted?", ["melanie"], "What has painted?"),
        ("What is John's favorite book series?", ["john"], "What is favorite book series?"),
        ("What has Nate recommended to Joanna?", ["joanna", "nate"], "What has recommended to?"),
        (
            "How does the staging deploy keep secrets?",
            ["staging-deploy"],
            "How does the keep secrets?",
        ),
        ("Where did Caroline move from?", ["carol"], None),  # no whole-word match: unchanged
        ("Melanie", ["melanie"], None),  # nothing would be left to match
        ("What about Melanie?", ["melanie"], None),  # only question words left
        ("which database do we use", ["database"], None),  # the tag is the topic: one word left
        ("Why did we choose PostgreSQL?", ["postgresql"], None),
    ],
)
def test_without_entities(text, entities, expected):
    assert without_entities(text, entities) == expected


DIALOG = [
    {"content": "Melanie: Hey Caroline! Good to see you, Melanie here!", "tags": ["melanie"]},
    {"content": "Melanie: Bye Caroline! Talk soon, love Melanie.", "tags": ["melanie"]},
    {"content": "Melanie: Thanks Caroline, Melanie is doing fine.", "tags": ["melanie"]},
    {"content": "Melanie: Here's the horse I put on the wooden wall with my brushes.",
     "tags": ["melanie"]},
    {"content": "Caroline: The weather was great at the beach today.", "tags": ["caroline"]},
]  # fmt: skip


def _semantic_order(query: str, **extra) -> list[str]:
    response = search(namespace="test-ns", query=query, mode="semantic", limit=5, **extra)
    return [m["id"] for m in response.memories]


def test_the_name_no_longer_pulls_greetings_in(remember):
    notes = remember(DIALOG)
    horse = str(notes[3].id)
    greetings = {str(n.id) for n in notes[:3]}
    query = "What artwork has Melanie made with a brush?"
    focused = _semantic_order(query)
    plain = _semantic_order(query, disabled_stages=["focus"])
    assert focused[0] == horse == plain[0]
    assert greetings & set(plain)  # the name alone carries greetings over the cosine floor
    assert not greetings & set(focused)


def test_the_confidence_reads_the_querys_own_cosine(remember):
    remember(DIALOG)
    query = "What artwork has Melanie made with a brush?"
    on = search(namespace="test-ns", query=query, include_debug=True)
    off = search(namespace="test-ns", query=query, include_debug=True, disabled_stages=["focus"])
    assert on.memories[0]["id"] == off.memories[0]["id"]
    top_on = on.debug["confidence_signals"]["top_cosine"]
    assert top_on == pytest.approx(off.debug["confidence_signals"]["top_cosine"], abs=1e-4)


def test_focus_needs_a_tag_name_in_the_query(remember):
    remember(DIALOG)
    query = "horse painting on a wooden wall"  # names no tag: the query's own vector
    assert _semantic_order(query) == _semantic_order(query, disabled_stages=["focus"])
