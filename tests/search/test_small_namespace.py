"""Small namespaces: the plain answer is not flagged, and nothing unrelated rides along."""

from __future__ import annotations

import pytest

from apps.search.services import render_markdown, search

pytestmark = pytest.mark.django_db

NOTES = [
    "We deploy with scripts/deploy.sh; it needs AWS_PROFILE set.",
    "Redis is the Celery broker.",
    "Avoid migrations on Fridays.",
    "The staging server runs on port 8080.",
    "Deploys need a green CI run first.",
]


def test_one_word_query_returns_its_match_unflagged(remember):
    notes = remember(NOTES)  # written a minute apart: temporal neighbours of each other
    response = search(namespace="test-ns", query="deploy")
    found = [m["id"] for m in response.memories]
    assert set(found[:2]) == {str(notes[0].id), str(notes[4].id)}  # the two deploy notes first
    assert str(notes[2].id) not in found  # the Friday note is not lifted by co-activation
    assert str(notes[1].id) not in found
    assert response.flags["evidence_gap"] is False
    assert response.confidence >= 0.5
    assert not render_markdown(response).startswith("> **Warning")


def test_exact_keyword_match_is_not_weak_evidence(remember):
    _, broker, *_ = remember(NOTES)
    response = search(namespace="test-ns", query="celery broker")
    assert response.memories[0]["id"] == str(broker.id)
    assert response.flags["evidence_gap"] is False


def test_question_the_namespace_cannot_answer_is_flagged(remember):
    remember(NOTES)
    response = search(namespace="test-ns", query="When did Caroline go to the LGBTQ support group?")
    assert response.flags["evidence_gap"] is True
    assert response.confidence < 0.5
    assert render_markdown(response).startswith("> **Warning: weak evidence.**")


def test_confidence_is_in_the_payload(remember):
    remember(NOTES)
    body = search(namespace="test-ns", query="deploy").to_dict()
    assert 0.0 <= body["confidence"] <= 1.0
    browse = search(namespace="test-ns", query="", categories=["note"]).to_dict()
    assert browse["confidence"] is None  # no query text: nothing to judge


def test_zscore_rule_stays_available(remember, settings):
    remember(NOTES)
    settings.SEARCH_EVIDENCE_RULE = "zscore"
    response = search(namespace="test-ns", query="recipe for sourdough bread with rye flour")
    assert response.flags["evidence_gap"] is True
    assert response.confidence is not None
