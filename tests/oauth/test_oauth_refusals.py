"""What the authorization server and the MCP endpoint refuse, each at its own step, over real
HTTP against the live server: a wrong PKCE verifier, a code used twice, a redirect URI that was
not registered, plain PKCE, a made-up, expired or revoked token, a token for another resource,
and a grant outside the person's namespaces."""

from __future__ import annotations

import time
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from django.core.management import call_command
from django.utils import timezone
from oauth2_provider.models import AccessToken, Grant, RefreshToken

from apps.access.models import OAuthConnection
from apps.oauth.models import RedeemedCode

from .dance import (
    MCP_HEADERS,
    TOOLS_LIST,
    authorize_url,
    code_for,
    consent,
    exchange,
    hidden_fields,
    login,
    mcp_status,
    pkce,
    query_of,
    refresh,
    register,
    tokens_for,
)
from .people import PASSWORD, make_person

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def setup(asgi_server):
    person = make_person("refusals")
    client_id = register(asgi_server)
    session = login(asgi_server, person.username, PASSWORD)
    yield asgi_server, person, client_id, session
    session.close()


def test_a_wrong_pkce_verifier_is_refused(setup):
    base, person, client_id, session = setup
    code, verifier = code_for(session, base, client_id, namespaces=[person.alpha.pk])
    wrong = exchange(base, client_id, code, verifier[:-4] + "abcd")
    assert wrong.status_code == 400
    assert wrong.json()["error"] == "invalid_grant"
    assert "access_token" not in wrong.json()


def test_a_code_used_twice_is_refused_and_revokes_what_it_issued(setup):
    base, person, client_id, session = setup
    code, verifier = code_for(session, base, client_id, namespaces=[person.alpha.pk])
    first = exchange(base, client_id, code, verifier)
    assert first.status_code == 200
    tokens = first.json()
    assert mcp_status(base, tokens["access_token"]) == 200
    second = exchange(base, client_id, code, verifier)
    assert second.status_code == 400
    assert second.json()["error"] == "invalid_grant"
    assert "access_token" not in second.json()
    # RFC 6749 4.1.2: the code leaked, so what it issued stops working.
    assert mcp_status(base, tokens["access_token"]) == 401
    assert refresh(base, client_id, tokens["refresh_token"]).status_code == 400


def test_a_reused_code_also_ends_the_tokens_refreshed_from_it(setup):
    base, person, client_id, session = setup
    code, verifier = code_for(session, base, client_id, namespaces=[person.alpha.pk])
    tokens = exchange(base, client_id, code, verifier).json()
    rotated = refresh(base, client_id, tokens["refresh_token"]).json()
    assert mcp_status(base, rotated["access_token"]) == 200
    # Another connection of the same person with the same app is not touched.
    other = tokens_for(session, base, client_id, namespaces=[person.alpha.pk])
    assert exchange(base, client_id, code, verifier).status_code == 400
    assert mcp_status(base, rotated["access_token"]) == 401
    assert refresh(base, client_id, rotated["refresh_token"]).json()["error"] == "invalid_grant"
    assert mcp_status(base, other["access_token"]) == 200


def test_the_record_of_an_exchanged_code_goes_with_its_refresh_token(setup):
    base, person, client_id, session = setup
    tokens_for(session, base, client_id, namespaces=[person.alpha.pk])
    mine = RedeemedCode.objects.filter(application__client_id=client_id)
    assert mine.count() == 1
    long_ago = timezone.now() - timedelta(days=31)  # past the 30-day refresh lifetime
    RefreshToken.objects.filter(user=person.user).update(revoked=long_ago)
    call_command("cleartokens")
    assert not mine.exists()


def test_an_unregistered_redirect_uri_is_refused_without_redirecting(setup):
    base, person, client_id, session = setup
    _, challenge = pkce()
    url = authorize_url(base, client_id, challenge, redirect_uri="https://attacker.example/cb")
    response = session.get(url)
    assert response.status_code == 400
    assert "location" not in response.headers
    assert "redirect" in response.text.lower()  # the page says what went wrong
    assert not Grant.objects.filter(user=person.user).exists()


def test_plain_pkce_and_a_missing_challenge_are_refused(setup):
    base, person, client_id, session = setup
    verifier, _ = pkce()
    plain = session.get(authorize_url(base, client_id, verifier, method="plain"))
    assert plain.status_code == 302
    assert "code" not in query_of(plain)
    assert query_of(plain)["error"] == "invalid_request"
    url = authorize_url(base, client_id, "x").replace("code_challenge=x&", "")
    missing = session.get(url.replace("code_challenge_method=S256&", ""))
    assert missing.status_code == 302
    assert "code" not in query_of(missing)
    assert query_of(missing)["error"] == "invalid_request"


def test_a_consent_form_tampered_to_plain_pkce_gives_no_code_and_leaves_nothing(setup):
    base, person, client_id, session = setup
    verifier, challenge = pkce()
    answer = consent(
        session,
        authorize_url(base, client_id, challenge),
        namespaces=[person.alpha.pk],
        tamper={"code_challenge": verifier, "code_challenge_method": "plain"},
    )
    assert answer.status_code == 302
    assert "code" not in query_of(answer)
    assert query_of(answer)["error"] == "invalid_request"
    assert not OAuthConnection.objects.filter(user=person.user).exists()
    assert not Grant.objects.filter(user=person.user).exists()


def test_a_made_up_token_is_refused_with_the_metadata_to_start_from(setup):
    base, *_ = setup
    response = httpx.post(
        f"{base}/mcp",
        json=TOOLS_LIST,
        headers={**MCP_HEADERS, "Authorization": "Bearer not-a-token-at-all"},
    )
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert f'resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"' in challenge
    assert 'error="invalid_token"' in challenge


def test_an_expired_access_token_is_refused(setup):
    base, person, client_id, session = setup
    tokens = tokens_for(session, base, client_id, namespaces=[person.alpha.pk])
    assert mcp_status(base, tokens["access_token"]) == 200
    assert tokens["expires_in"] <= 3600  # short-lived
    AccessToken.objects.filter(user=person.user).update(
        expires=timezone.now() - timedelta(seconds=1)
    )
    assert mcp_status(base, tokens["access_token"]) == 401


def test_a_token_for_another_resource_is_refused(setup):
    base, person, client_id, session = setup
    elsewhere = "https://elsewhere.example/mcp"
    # Asked for at the authorization endpoint: an error back to the client, no code.
    _, challenge = pkce()
    asked = session.get(authorize_url(base, client_id, challenge, resource=elsewhere))
    assert asked.status_code == 302
    assert query_of(asked)["error"] == "invalid_target"
    assert "code" not in query_of(asked)
    # Asked for at the token endpoint, after a consent for this server: refused.
    code, verifier = code_for(session, base, client_id, namespaces=[person.alpha.pk])
    swapped = exchange(base, client_id, code, verifier, resource=elsewhere)
    assert swapped.status_code == 400
    assert swapped.json()["error"] == "invalid_target"
    # A token whose audience is another server (however it came to exist) opens nothing here.
    tokens = tokens_for(session, base, client_id, namespaces=[person.alpha.pk])
    assert mcp_status(base, tokens["access_token"]) == 200
    AccessToken.objects.filter(user=person.user).update(resource=[elsewhere])
    assert mcp_status(base, tokens["access_token"]) == 401


def test_an_oauth_token_is_refused_by_the_rest_api(setup):
    base, person, client_id, session = setup
    tokens = tokens_for(session, base, client_id, namespaces=[person.alpha.pk])
    response = httpx.get(
        f"{base}/api/v1/memories/",
        headers={"Authorization": f"Bearer {tokens['access_token']}"},
    )
    assert response.status_code == 401


def test_a_grant_outside_the_persons_namespaces_is_refused(setup):
    base, person, client_id, session = setup
    _, challenge = pkce()
    answer = consent(
        session,
        authorize_url(base, client_id, challenge),
        namespaces=[person.gamma.pk],
        access="write",
    )
    assert answer.status_code == 400
    assert f"not a member of namespace {person.gamma.pk}" in answer.text
    assert not OAuthConnection.objects.filter(user=person.user).exists()
    assert not Grant.objects.filter(user=person.user).exists()


def test_denying_gives_the_client_an_error_and_no_code(setup):
    base, person, client_id, session = setup
    _, challenge = pkce()
    answer = consent(
        session,
        authorize_url(base, client_id, challenge),
        namespaces=[person.alpha.pk],
        allow=False,
    )
    assert answer.status_code == 302
    assert query_of(answer)["error"] == "access_denied"
    assert not OAuthConnection.objects.filter(user=person.user).exists()


def test_a_revoked_connection_is_refused_within_a_second(setup):
    base, person, client_id, session = setup
    tokens = tokens_for(session, base, client_id, namespaces=[person.alpha.pk])
    assert mcp_status(base, tokens["access_token"]) == 200
    connection = OAuthConnection.objects.get(user=person.user)
    page = session.get("/connect/apps/")
    assert "test client" in page.text
    started = time.monotonic()
    revoked = session.post(
        f"/connect/apps/{connection.pk}/revoke/",
        data={"csrfmiddlewaretoken": hidden_fields(page.text)["csrfmiddlewaretoken"]},
    )
    assert revoked.status_code == 302
    assert mcp_status(base, tokens["access_token"]) == 401
    elapsed = time.monotonic() - started
    assert elapsed < 1.0
    again = refresh(base, client_id, tokens["refresh_token"])
    assert again.status_code == 400
    assert again.json()["error"] == "invalid_grant"
    assert not OAuthConnection.objects.filter(pk=connection.pk).exists()


def test_a_person_cannot_revoke_someone_elses_connection(setup):
    base, person, client_id, session = setup
    tokens_for(session, base, client_id, namespaces=[person.alpha.pk])
    connection = OAuthConnection.objects.get(user=person.user)
    other = make_person("mallory")
    intruder = login(base, other.username, PASSWORD)
    page = intruder.get("/connect/apps/")
    assert "test client" not in page.text
    answer = intruder.post(
        f"/connect/apps/{connection.pk}/revoke/",
        data={"csrfmiddlewaretoken": hidden_fields(page.text)["csrfmiddlewaretoken"]},
    )
    intruder.close()
    assert answer.status_code == 404
    assert OAuthConnection.objects.filter(pk=connection.pk).exists()


def test_a_refresh_token_used_twice_ends_the_whole_family(setup):
    base, person, client_id, session = setup
    tokens = tokens_for(session, base, client_id, namespaces=[person.alpha.pk])
    rotated = refresh(base, client_id, tokens["refresh_token"])
    assert rotated.status_code == 200
    new = rotated.json()
    assert new["refresh_token"] != tokens["refresh_token"]
    assert mcp_status(base, new["access_token"]) == 200
    replayed = refresh(base, client_id, tokens["refresh_token"])
    assert replayed.status_code == 400
    # Reuse of a rotated refresh token means it leaked: its successors stop too.
    assert mcp_status(base, new["access_token"]) == 401


def test_a_client_revoking_its_own_token_is_refused_afterwards(setup):
    base, person, client_id, session = setup
    tokens = tokens_for(session, base, client_id, namespaces=[person.alpha.pk])
    assert mcp_status(base, tokens["access_token"]) == 200
    revoked = httpx.post(
        f"{base}/oauth/revoke",
        data={"token": tokens["refresh_token"], "client_id": client_id},
    )
    assert revoked.status_code == 200
    assert mcp_status(base, tokens["access_token"]) == 401
    assert refresh(base, client_id, tokens["refresh_token"]).status_code == 400


def test_the_login_on_the_way_to_consent_locks_out_like_the_ui(asgi_server, settings):
    settings.AXES_FAILURE_LIMIT = 3
    person = make_person("guessed")
    client_id = register(asgi_server)
    _, challenge = pkce()
    session = httpx.Client(base_url=asgi_server, follow_redirects=False, timeout=60)
    to_login = session.get(authorize_url(asgi_server, client_id, challenge))
    assert to_login.headers["location"].startswith("/login/?next=")
    next_url = parse_qs(urlsplit(to_login.headers["location"]).query)["next"][0]
    form = hidden_fields(session.get(to_login.headers["location"]).text)

    def attempt(password: str) -> httpx.Response:
        data = {**form, "username": person.username, "password": password, "next": next_url}
        return session.post("/login/", data=data)

    assert [attempt("wrong").status_code for _ in range(3)] == [200, 200, 429]
    locked = attempt(PASSWORD)  # the right password, during the lockout
    assert locked.status_code == 429
    assert session.get(next_url).status_code == 302  # still not logged in: back to login
    session.close()
