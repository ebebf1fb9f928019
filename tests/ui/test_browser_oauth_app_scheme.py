"""An IDE assistant's consent in the browser: Allow sends the browser on to the app's own
scheme (cursor://...) with the code, past the consent page's Content-Security-Policy (whose
form-action names that scheme); the code, exchanged with PKCE, gives a token the MCP endpoint
takes."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from tests.oauth.dance import authorize_url, exchange, mcp_status, pkce, register
from tests.oauth.people import make_person

from .conftest import PASSWORD, allow_console_errors

pytestmark = pytest.mark.django_db(transaction=True)

CURSOR = "cursor://anysphere.cursor-retrieval/oauth/callback"


def test_allow_sends_the_code_to_cursor(page, asgi_server):
    person = make_person("browser-ide")
    client_id = register(asgi_server, redirect_uri=CURSOR, name="Cursor")
    verifier, challenge = pkce()
    # No Cursor here to take the link: the browser says so; a CSP refusal would still fail.
    allow_console_errors(page, "Failed to launch 'cursor://")
    page.goto(authorize_url(asgi_server, client_id, challenge, redirect_uri=CURSOR, state="c1"))
    page.wait_for_url("**/login/**")
    page.fill("input[name=username]", person.username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url("**/oauth/authorize**")
    assert "Cursor" in page.inner_text("h1")
    assert CURSOR in page.inner_text("body")

    page.check(f"input[name=namespaces][value='{person.alpha.pk}']")
    with page.expect_response(lambda r: r.request.method == "POST") as answered:
        page.click("button[name=allow]")
    answer = answered.value
    location = answer.headers["location"]
    assert answer.status == 302 and location.startswith(CURSOR + "?")
    page.wait_for_timeout(500)  # a CSP refusal of the redirect would be reported by now
    params = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
    assert params["state"] == "c1"
    tokens = exchange(asgi_server, client_id, params["code"], verifier, redirect_uri=CURSOR)
    assert tokens.status_code == 200, tokens.text
    assert mcp_status(asgi_server, tokens.json()["access_token"]) == 200
