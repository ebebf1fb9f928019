"""Links at write time and re-check marks over REST (issue 44): create and batch take
caused_by / depends_on, refuse ids of another namespace with a 400 naming the field and write
nothing, and a memory whose basis changed says so on read and in search."""

from __future__ import annotations

from apps.memories.models import CausalEdge, Memory, Relation

from .live import bearer


def _post(api, auth, **fields):
    response = api.post("/memories/", json=fields, headers=auth)
    assert response.status_code == 201, response.text
    return response.json()


def test_create_with_caused_by_and_depends_on_links_both_ways(api, tokens, embedding_model):
    auth = bearer(tokens.alpha_rw)
    outage = _post(api, auth, content="Jenkins was down for two days on 3 March.")["memory"]
    fact = _post(api, auth, content="CI runners use the ubuntu-22 image.")["memory"]
    decision = _post(
        api,
        auth,
        content="We moved CI from Jenkins to GitHub Actions.",
        category="decision",
        caused_by=[outage["id"]],
        depends_on=[fact["id"]],
    )
    assert decision["caused_by"] == [outage["id"]]
    assert decision["depends_on"] == [fact["id"]]
    new_id = decision["memory"]["id"]
    assert CausalEdge.objects.filter(
        source_id=outage["id"], target_id=new_id, relation=Relation.CAUSED
    ).exists()
    assert CausalEdge.objects.filter(
        source_id=new_id, target_id=fact["id"], relation=Relation.DEPENDS_ON
    ).exists()


def test_batch_items_take_links(api, tokens, embedding_model):
    auth = bearer(tokens.alpha_rw)
    fact = _post(api, auth, content="Staging runs Postgres 14.")["memory"]
    response = api.post(
        "/memories/batch/",
        json={
            "items": [
                {"content": "Use the pg14 extension list on staging.", "depends_on": [fact["id"]]},
                {"content": "Staging was provisioned in May.", "caused_by": [fact["id"]]},
            ]
        },
        headers=auth,
    )
    assert response.status_code in (200, 201), response.text
    results = response.json()["results"]
    assert results[0]["depends_on"] == [fact["id"]]
    assert results[1]["caused_by"] == [fact["id"]]
    assert CausalEdge.objects.filter(target_id=fact["id"]).count() == 1  # the depends_on
    assert CausalEdge.objects.filter(source_id=fact["id"], relation="caused").count() == 1


def test_links_to_another_namespace_or_unknown_ids_are_a_400_writing_nothing(
    api, tokens, embedding_model
):
    alpha, beta = bearer(tokens.alpha_rw), bearer(tokens.beta_rw)
    elsewhere = _post(api, beta, content="A fact of the beta team.")["memory"]
    before = Memory.objects.count()
    cross = api.post(
        "/memories/",
        json={"content": "Rests on beta's fact.", "depends_on": [elsewhere["id"]]},
        headers=alpha,
    )
    assert cross.status_code == 400
    assert "depends_on[0]" in cross.json()["errors"]
    unknown = api.post(
        "/memories/batch/",
        json={
            "items": [
                {"content": "Fine on its own."},
                {"content": "Named a cause that is not there.", "caused_by": ["no-such-id"]},
            ]
        },
        headers=alpha,
    )
    assert unknown.status_code == 400
    assert "items[1].caused_by[0]" in unknown.json()["errors"]
    not_a_list = api.post("/memories/", json={"content": "x y", "caused_by": "abc"}, headers=alpha)
    assert not_a_list.status_code == 400 and "caused_by" in not_a_list.json()["errors"]
    assert Memory.objects.count() == before
    assert not CausalEdge.objects.exists()


def test_a_superseded_basis_marks_the_dependent_on_read_and_in_search(api, tokens, embedding_model):
    auth = bearer(tokens.alpha_rw)
    fact = _post(api, auth, content="The staging database is Postgres 14.", created_at="2025-01-01")
    step = _post(
        api,
        auth,
        content="Runbook: install the pg14 extension list on the staging database.",
        depends_on=[fact["memory"]["id"]],
    )["memory"]
    assert api.get(f"/memories/{step['id']}/", headers=auth).json()["needs_recheck"] == []
    _post(
        api,
        auth,
        content="The staging database is Postgres 16 since the upgrade.",
        supersedes=[fact["memory"]["id"]],
    )
    marks = api.get(f"/memories/{step['id']}/", headers=auth).json()["needs_recheck"]
    assert [(m["basis"], m["reason"]) for m in marks] == [(fact["memory"]["id"], "superseded")]
    found = api.post(
        "/search/", json={"query": "pg14 extension list runbook staging"}, headers=auth
    ).json()["memories"]
    hit = next(m for m in found if m["id"] == step["id"])
    assert hit["basis_changed"]["basis"] == fact["memory"]["id"]
    assert hit["basis_changed"]["reason"] == "superseded"
    assert hit["basis_changed"]["on"][:4] >= "2025"
    others = [m for m in found if m["id"] != step["id"]]
    assert all(m["basis_changed"] is None for m in others)
