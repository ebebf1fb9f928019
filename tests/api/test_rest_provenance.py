"""Provenance over REST: each memory says who wrote it, with which token or app and through which
door, and list and search filter by it."""

from __future__ import annotations

import httpx
import pytest
from django.contrib.auth import get_user_model
from oauth2_provider.models import Application

from apps.access.models import OAuthConnection
from apps.memories.services import memory_create

from .live import bearer

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def written(asgi_server, tokens):
    """One memory per writer: the token a-rw and the token ab-rw over REST, the person ana in
    the web UI, and ana's OAuth app "Claude" over MCP."""
    ana = get_user_model().objects.create_user(username="ana", password="x-secret-9")
    app = Application.objects.create(
        name="Claude",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="https://claude.example/callback",
        client_secret="",
    )
    connection = OAuthConnection.objects.create(application=app, user=ana, read_only=False)
    connection.namespaces.add(tokens.alpha)
    ids = {}
    for raw, name, text in (
        (tokens.alpha_rw, "a-rw", "The build cache lives on the shared runner volume."),
        (tokens.both_rw, "ab-rw", "Release notes are drafted in the wiki before tagging."),
    ):
        response = httpx.post(
            f"{asgi_server}/api/v1/memories/",
            json={"namespace": "alpha", "content": text, "source_url": f"https://x.example/{name}"},
            headers=bearer(raw),
        )
        assert response.status_code == 201, response.text
        ids[name] = response.json()["memory"]["id"]
    ids["ana"] = str(
        memory_create(
            namespace=tokens.alpha,
            content="Ana reviews every database migration before the release.",
            actor=ana,
            door="ui",
        ).memory.pk
    )
    ids["claude"] = str(
        memory_create(
            namespace=tokens.alpha,
            content="The on-call rota changes every Monday at nine.",
            actor=connection,
            door="mcp",
        ).memory.pk
    )
    return ids, app


def _list(asgi_server, raw, **params) -> set[str]:
    response = httpx.get(
        f"{asgi_server}/api/v1/memories/",
        params={"namespace": "alpha", **params},
        headers=bearer(raw),
    )
    assert response.status_code == 200, response.text
    return {m["id"] for m in response.json()["results"]}


def _search(asgi_server, raw, **params) -> set[str]:
    body = {"namespace": "alpha", "query": "", "limit": 20, **params}
    response = httpx.post(f"{asgi_server}/api/v1/search/", json=body, headers=bearer(raw))
    assert response.status_code == 200, response.text
    return {m["id"] for m in response.json()["memories"]}


def test_every_memory_says_who_wrote_it_and_an_edit_keeps_it(asgi_server, tokens, written):
    ids, app = written

    def get(key: str) -> dict:
        url = f"{asgi_server}/api/v1/memories/{ids[key]}/"
        return httpx.get(url, headers=bearer(tokens.alpha_ro)).json()["provenance"]

    token = get("a-rw")
    assert token["door"] == "rest" and token["person"] is None
    assert token["credential"] == {"kind": "token", "name": "a-rw"}
    assert token["source_url"] == "https://x.example/a-rw"
    person = get("ana")
    assert person["door"] == "ui" and person["person"] == "ana" and person["credential"] is None
    claude = get("claude")
    assert claude["person"] == "ana" and claude["door"] == "mcp"
    assert claude["credential"] == {"kind": "app", "name": "Claude", "client_id": app.client_id}

    # An edit by someone else keeps where the memory came from (the history names the editor).
    response = httpx.patch(
        f"{asgi_server}/api/v1/memories/{ids['ana']}/",
        json={"content": "Ana or Ben review every database migration before the release."},
        headers=bearer(tokens.alpha_rw),
    )
    assert response.status_code == 200, response.text
    assert get("ana") == person


def test_list_and_search_filter_by_person_token_app_and_door(asgi_server, tokens, written):
    ids, _ = written
    raw = tokens.alpha_ro
    for find in (_list, _search):
        assert find(asgi_server, raw, person="ana") == {ids["ana"], ids["claude"]}
        assert find(asgi_server, raw, credential="a-rw") == {ids["a-rw"]}
        assert find(asgi_server, raw, credential="Claude") == {ids["claude"]}
        assert find(asgi_server, raw, door="rest") == {ids["a-rw"], ids["ab-rw"]}
        assert find(asgi_server, raw, door="mcp", person="ana") == {ids["claude"]}
        assert find(asgi_server, raw, person="nobody") == set()


def test_search_results_carry_provenance(asgi_server, tokens, written):
    ids, _ = written
    body = {"namespace": "alpha", "query": "database migration review"}
    response = httpx.post(
        f"{asgi_server}/api/v1/search/", json=body, headers=bearer(tokens.alpha_ro)
    )
    hit = next(m for m in response.json()["memories"] if m["id"] == ids["ana"])
    assert hit["provenance"]["person"] == "ana" and hit["provenance"]["door"] == "ui"


def test_bad_provenance_filters_and_source_urls_are_named(asgi_server, tokens, written):
    response = httpx.get(
        f"{asgi_server}/api/v1/memories/",
        params={"door": "telepathy"},
        headers=bearer(tokens.alpha_ro),
    )
    assert response.status_code == 400 and "door" in response.text
    response = httpx.post(
        f"{asgi_server}/api/v1/search/",
        json={"query": "x", "door": "telepathy"},
        headers=bearer(tokens.alpha_ro),
    )
    assert response.status_code == 400 and "door" in response.text
    response = httpx.post(
        f"{asgi_server}/api/v1/memories/",
        json={"namespace": "alpha", "content": "A note.", "source_url": "ftp://x.example/a"},
        headers=bearer(tokens.alpha_rw),
    )
    assert response.status_code == 400 and "source_url" in response.text
