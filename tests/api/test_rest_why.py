"""REST search carries the why path: a why-question's chain in `path` and in `text`; the
OpenAPI schema declares it."""

from __future__ import annotations

import pytest

from tests.factories import jenkins_chain

from .live import bearer


@pytest.fixture
def chain(tokens, embedding_model):
    incident, decision = jenkins_chain(tokens.alpha)
    return str(incident.pk), str(decision.pk)


def test_search_returns_the_chain_for_a_why_question(api, tokens, chain):
    incident, decision = chain
    auth = bearer(tokens.alpha_rw)
    body = api.post(
        "/search/", json={"query": "Why did we move CI off Jenkins?"}, headers=auth
    ).json()
    assert [m["id"] for m in body["memories"]][:2] == [decision, incident]
    assert body["path"] == [
        {"id": decision, "title": "CI moved to GitHub Actions", "relation": None, "reads": None},
        {
            "id": incident,
            "title": "Jenkins outage of 3 March",
            "relation": "caused",
            "reads": "caused by",
        },
    ]
    assert "CI moved to GitHub Actions  <- caused by  Jenkins outage of 3 March" in body["text"]
    plain = api.get("/search/", params={"query": "GitHub Actions"}, headers=auth).json()
    assert plain["path"] == []


def test_schema_declares_the_path(api):
    spec = api.get("/schema/", params={"format": "json"}).json()
    search_out = spec["components"]["schemas"]["SearchOut"]
    assert "path" in search_out["required"]
    step = spec["components"]["schemas"]["PathStepOut"]["properties"]
    assert set(step) == {"id", "title", "relation", "reads"}
