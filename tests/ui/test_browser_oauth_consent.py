"""Connecting an assistant with OAuth, in the browser: the app sends the person to memoryhub,
they log in on the UI's login page, see which app asks, choose a namespace and read-write,
allow, and the browser lands on the app's callback with a code (past the page's CSP, which
must let the consent form's answer go to the app). The code becomes a token that works; the
person then finds the app under Connected apps and on the Connect page, revokes it, and the
token stops."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from apps.access.models import OAuthConnection, Role
from apps.access.services import membership_set
from tests.oauth.dance import CALLBACK, authorize_url, exchange, mcp_status, pkce, register
from tests.oauth.people import make_person

from .conftest import PASSWORD, shoot

pytestmark = pytest.mark.django_db(transaction=True)


def test_login_consent_and_revoke_in_the_browser(page, asgi_server):
    person = make_person("browser-alice")
    membership_set(namespace=person.alpha, user=person.user, role=Role.OWNER)
    client_id = register(asgi_server, name="Claude")
    verifier, challenge = pkce()
    callbacks: list[str] = []

    def app_callback(route):
        callbacks.append(route.request.url)
        route.fulfill(status=200, content_type="text/html", body="<p>Connected.</p>")

    page.route(f"{CALLBACK}**", app_callback)
    page.goto(authorize_url(asgi_server, client_id, challenge, state="browser-state"))
    page.wait_for_url("**/login/**")
    page.fill("input[name=username]", person.username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url("**/oauth/authorize**")

    assert "Claude" in page.inner_text("h1")
    offered = page.inner_text("#consent fieldset")
    assert f"{person.alpha.name} (you: owner)" in offered
    assert f"{person.beta.name} (you: viewer)" in offered
    assert person.gamma.name not in offered  # not a member: never offered
    shoot(page, "oauth-consent")
    page.set_viewport_size({"width": 390, "height": 844})
    shoot(page, "oauth-consent-phone")
    page.set_viewport_size({"width": 1280, "height": 900})

    page.check(f"input[name=namespaces][value='{person.alpha.pk}']")
    page.check("input[name=access][value=write]")
    page.click("button[name=allow]")
    page.wait_for_url(f"{CALLBACK}**")

    assert len(callbacks) == 1
    answer = {k: v[0] for k, v in parse_qs(urlsplit(callbacks[0]).query).items()}
    assert answer["state"] == "browser-state"
    assert answer["iss"] == asgi_server
    tokens = exchange(asgi_server, client_id, answer["code"], verifier)
    assert tokens.status_code == 200, tokens.text
    access_token = tokens.json()["access_token"]
    assert mcp_status(asgi_server, access_token) == 200

    page.goto(f"/ns/{person.alpha.name}/connect/")
    row = page.locator("table.connections tbody tr").first
    assert "Claude" in row.inner_text()
    assert "read-write" in row.inner_text()
    page.goto("/connect/apps/")
    row = page.locator("table.connections tbody tr").first
    assert person.alpha.name in row.inner_text()
    assert "never" not in row.inner_text()  # last use: the MCP call above
    shoot(page, "oauth-connected-apps")
    page.set_viewport_size({"width": 390, "height": 844})
    shoot(page, "oauth-connected-apps-phone")
    page.set_viewport_size({"width": 1280, "height": 900})

    page.on("dialog", lambda dialog: dialog.accept())
    row.locator("button", has_text="Revoke").click()
    page.wait_for_selector(".messages")
    assert "disconnected" in page.inner_text(".messages")
    assert "No app is connected" in page.inner_text("table.connections")
    assert not OAuthConnection.objects.filter(user=person.user).exists()
    assert mcp_status(asgi_server, access_token) == 401


def test_denying_in_the_browser_sends_the_app_an_error(page, asgi_server):
    person = make_person("browser-bob")
    client_id = register(asgi_server, name="ChatGPT")
    _, challenge = pkce()
    callbacks: list[str] = []
    page.route(
        f"{CALLBACK}**",
        lambda route: (callbacks.append(route.request.url), route.fulfill(body="x"))[1],
    )
    page.goto("/login/")
    page.fill("input[name=username]", person.username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url("**/")
    page.goto(authorize_url(asgi_server, client_id, challenge))
    page.click("button:has-text('Deny')")
    page.wait_for_url(f"{CALLBACK}**")
    assert parse_qs(urlsplit(callbacks[0]).query)["error"] == ["access_denied"]
    assert not OAuthConnection.objects.filter(user=person.user).exists()
