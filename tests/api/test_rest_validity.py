"""Facts that change over REST: supersedes on create, validity on every result, as_of and
include_superseded on search, clear 400s naming the field."""

from __future__ import annotations

from .live import bearer


def test_supersede_over_rest_and_search_as_of(api, tokens, embedding_model):
    auth = bearer(tokens.alpha_rw)
    old = api.post(
        "/memories/",
        json={"content": "Error tracking uses Sentry.", "created_at": "2025-03-01"},
        headers=auth,
    ).json()["memory"]
    assert old["valid_from"].startswith("2025-03-01") and old["valid_until"] is None
    new = api.post(
        "/memories/",
        json={
            "content": "We replaced Sentry with Rollbar for error tracking.",
            "created_at": "2025-06-01",
            "supersedes": [old["id"]],
        },
        headers=auth,
    )
    assert new.status_code == 201, new.text
    assert new.json()["supersedes"] == [old["id"]]
    new_id = new.json()["memory"]["id"]

    query = {"query": "Which tool do we use for error tracking?"}
    now = api.post("/search/", json=query, headers=auth).json()["memories"]
    assert now[0]["id"] == new_id and old["id"] not in [m["id"] for m in now]
    assert now[0]["supersedes"][0]["id"] == old["id"]
    both = api.post("/search/", json={**query, "include_superseded": True}, headers=auth).json()[
        "memories"
    ]
    marked = {m["id"]: m for m in both}
    assert marked[old["id"]]["current"] is False
    assert marked[old["id"]]["superseded_by"] == new_id
    then = api.get("/search/", params={**query, "as_of": "2025-04-01"}, headers=auth)
    assert [m["id"] for m in then.json()["memories"]] == [old["id"]]

    read = api.get(f"/memories/{old['id']}/", headers=auth).json()
    assert read["valid_until"].startswith("2025-06-01")


def test_bad_validity_input_is_a_400_naming_the_field(api, tokens, embedding_model):
    auth = bearer(tokens.alpha_rw)
    unknown = api.post(
        "/memories/",
        json={"content": "x y z", "supersedes": ["7a1b6a52-0000-4000-8000-000000000000"]},
        headers=auth,
    )
    assert unknown.status_code == 400
    assert "supersedes[0]" in unknown.json()["errors"]
    backwards = api.post(
        "/memories/",
        json={"content": "x y z", "valid_from": "2025-05-01", "valid_until": "2025-01-01"},
        headers=auth,
    )
    assert backwards.status_code == 400 and "valid_until" in backwards.json()["errors"]
    bad_as_of = api.post("/search/", json={"query": "x", "as_of": "soon"}, headers=auth)
    assert bad_as_of.status_code == 400 and "as_of" in bad_as_of.json()["errors"]


def test_a_negated_rule_is_answered_as_a_possible_contradiction(api, tokens, embedding_model):
    auth = bearer(tokens.alpha_rw)
    rule = api.post(
        "/memories/", json={"content": "Never commit API tokens to the repository."}, headers=auth
    ).json()["memory"]
    against = api.post(
        "/memories/", json={"content": "Commit the API tokens to the repository."}, headers=auth
    )
    assert against.status_code == 201, against.text
    answer = against.json()
    assert answer["possible_updates"] == []
    assert [c["id"] for c in answer["possible_contradictions"]] == [rule["id"]]
    assert "negation" in answer["possible_contradictions"][0]["why"]
