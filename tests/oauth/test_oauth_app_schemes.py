"""IDE assistants get their code back on their own URI scheme (RFC 8252 7.1): a client that
registers `cursor://...` or a reverse-domain scheme goes through the whole code flow over real
HTTP, while `javascript:`, `data:`, `file:` and plain http to another host stay refused, at
registration, in the admin and at authorization."""

from __future__ import annotations

from urllib.parse import quote

import httpx
import pytest
from oauth2_provider.models import Application, Grant

from .dance import (
    MCP_HEADERS,
    authorize_url,
    consent,
    exchange,
    login,
    pkce,
    query_of,
    register,
)
from .people import PASSWORD, make_person

pytestmark = pytest.mark.django_db(transaction=True)

CURSOR = "cursor://anysphere.cursor-retrieval/oauth/callback"
VSCODE = "vscode://vscode.memoryhub/callback"
REVERSE_DOMAIN = "com.example.app:/oauth/callback"

# Each of these is refused at registration with invalid_redirect_uri, the field named.
REFUSED_REDIRECTS = [
    "http://evil.example/callback",  # plain http off the loopback addresses
    "javascript:alert(1)",
    "javascript://anysphere.cursor-retrieval/%0Aalert(1)",
    "JavaScript:alert(document.cookie)",
    "data:text/html,<script>alert(1)</script>",
    "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
    "file:///etc/passwd",
    "vbscript:msgbox(1)",
    "blob:https://evil.example/1",
    "view-source:https://evil.example/",
    "cursor:javascript:alert(1)",  # an app scheme with no path of its own
    "cursor://anysphere.cursor-retrieval/cb#fragment",
    "notanapp:/callback",  # neither a reverse domain name nor an IDE's known scheme
    "http://[::1",  # unclosed bracket: not a URI at all
    " javascript:alert(1)",
]


@pytest.fixture
def person_session(asgi_server):
    person = make_person("ide")
    session = login(asgi_server, person.username, PASSWORD)
    yield person, session
    session.close()


def _full_flow(base: str, session: httpx.Client, person, redirect_uri: str) -> httpx.Response:
    client_id = register(base, redirect_uri=redirect_uri, name="Cursor")
    verifier, challenge = pkce()
    url = authorize_url(base, client_id, challenge, redirect_uri=redirect_uri, state="ide-1")
    page = session.get(url)
    assert page.status_code == 200
    assert redirect_uri in page.text  # the person sees where the code will go
    answer = consent(session, url, namespaces=[person.alpha.pk], access="write")
    assert answer.status_code == 302, answer.text
    location = answer.headers["location"]
    assert location.startswith(redirect_uri + "?")
    params = query_of(answer)
    assert params["state"] == "ide-1"
    token = exchange(base, client_id, params["code"], verifier, redirect_uri=redirect_uri)
    assert token.status_code == 200, token.text
    call = httpx.post(
        f"{base}/mcp",
        json={
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {
                "name": "remember",
                "arguments": {"content": f"The IDE connected through {redirect_uri}."},
            },
        },
        headers={**MCP_HEADERS, "Authorization": f"Bearer {token.json()['access_token']}"},
        timeout=60,
    )
    assert call.status_code == 200, call.text
    assert "Stored memory" in call.text
    assert person.alpha.memories.filter(content__contains=redirect_uri).exists()
    return page


@pytest.mark.parametrize(
    "redirect_uri, form_target",
    [
        (CURSOR, "cursor:"),
        (VSCODE, "vscode:"),
        (REVERSE_DOMAIN, "com.example.app:"),
    ],
)
def test_an_ide_client_on_its_own_scheme_completes_the_code_flow(
    asgi_server, person_session, redirect_uri, form_target
):
    person, session = person_session
    page = _full_flow(asgi_server, session, person, redirect_uri)
    # The consent form may lead the browser on to the app's scheme, and only to it.
    policy = page.headers["content-security-policy"]
    form_action = next(p for p in policy.split(";") if p.strip().startswith("form-action"))
    assert form_target in form_action.split()
    assert "javascript" not in form_action and "*" not in form_action


@pytest.mark.parametrize("uri", REFUSED_REDIRECTS)
def test_dangerous_and_foreign_redirect_uris_are_refused_at_registration(asgi_server, uri):
    before = Application.objects.count()
    response = httpx.post(f"{asgi_server}/oauth/register", json={"redirect_uris": [uri]})
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["error"] == "invalid_redirect_uri"
    assert "redirect_uris" in body["error_description"]
    assert Application.objects.count() == before


def test_https_stays_allowed_and_is_matched_exactly(asgi_server, person_session):
    person, session = person_session
    client_id = register(asgi_server, redirect_uri=CURSOR)
    _, challenge = pkce()
    for other in [
        "https://evil.example/callback",
        "cursor://evil.example/oauth/callback",  # same scheme, another app's host
        "cursor://anysphere.cursor-retrieval/oauth/callback/../../steal",
        "com.example.app:/oauth/callback",
        "javascript:alert(1)",
        CURSOR.upper(),
    ]:
        response = session.get(authorize_url(asgi_server, client_id, challenge, redirect_uri=other))
        assert response.status_code == 400, other
        assert "location" not in response.headers
    assert not Grant.objects.filter(user=person.user).exists()


def test_an_unvalidated_javascript_redirect_is_never_followed(asgi_server, person_session):
    """A row written past validation (a script, an old import) still gets no redirect."""
    person, session = person_session
    app = Application.objects.create(
        name="smuggled",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="javascript:alert(1)",
        client_secret="",
    )
    _, challenge = pkce()
    url = authorize_url(asgi_server, app.client_id, challenge, redirect_uri="javascript:alert(1)")
    page = session.get(url)
    assert "javascript" not in page.headers.get("content-security-policy", "")
    if page.status_code == 200:  # the consent page may show; Allow must not send the code
        answer = consent(session, url, namespaces=[person.alpha.pk])
        assert answer.status_code == 400
        assert "javascript" not in answer.headers.get("location", "")
    assert not Grant.objects.filter(user=person.user).exists()


def _admin_add(admin_client, redirect_uris: str):
    return admin_client.post(
        "/admin/oauth2_provider/application/add/",
        {
            "client_id": "admin-added-" + quote(redirect_uris, safe="")[:40],
            "redirect_uris": redirect_uris,
            "post_logout_redirect_uris": "",
            "allowed_origins": "",
            "client_type": Application.CLIENT_PUBLIC,
            "authorization_grant_type": Application.GRANT_AUTHORIZATION_CODE,
            "client_secret": "",
            "name": "added in the admin",
            "algorithm": "",
        },
    )


def test_the_admin_registers_app_schemes_and_refuses_javascript(admin_client):
    added = _admin_add(admin_client, f"{CURSOR} {REVERSE_DOMAIN}")
    assert added.status_code == 302, added.content.decode()[:2000]
    app = Application.objects.get(name="added in the admin")
    assert app.redirect_uri_allowed(CURSOR)
    for uri in ["javascript:alert(1)", "data:text/html,x", "file:///etc/passwd"]:
        refused = _admin_add(admin_client, uri)
        assert refused.status_code == 200  # the form again, with the error
        assert "invalid_scheme" in refused.content.decode()
    assert Application.objects.filter(name="added in the admin").count() == 1
