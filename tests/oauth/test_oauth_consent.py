"""Consent is never skipped, over real HTTP against the live server. The attack of issue 42: a
person holds a live token for an app; a local process that knows the app's client id asks
/oauth/authorize with approval_prompt=auto, its own loopback port as redirect URI and its own
PKCE challenge. The answer used to be a 302 with a code for the person; now it is the consent
page, and a code only follows the person's Allow."""

from __future__ import annotations

import httpx
import pytest
from oauth2_provider.models import Application, Grant

from .dance import (
    CALLBACK,
    authorize_url,
    consent,
    exchange,
    hidden_fields,
    login,
    mcp_status,
    pkce,
    query_of,
    register,
    tokens_for,
)
from .people import PASSWORD, make_person

pytestmark = pytest.mark.django_db(transaction=True)

ATTACKER_CALLBACK = "http://127.0.0.1:49152/callback"  # same path, its own port


@pytest.fixture
def connected(asgi_server):
    """A person who already allowed the app and holds a working token for it."""
    person = make_person("consenting")
    client_id = register(asgi_server)
    session = login(asgi_server, person.username, PASSWORD)
    tokens = tokens_for(session, asgi_server, client_id, namespaces=[person.alpha.pk])
    assert mcp_status(asgi_server, tokens["access_token"]) == 200
    yield asgi_server, person, client_id, session
    session.close()


def _consent_page_and_no_code(response: httpx.Response) -> None:
    assert response.status_code == 200, response.headers.get("location")
    assert "location" not in response.headers
    assert 'name="allow"' in response.text  # the Allow button: the person is asked


def test_approval_prompt_auto_on_another_loopback_port_gets_the_consent_page(connected):
    base, person, client_id, session = connected
    grants_before = Grant.objects.filter(user=person.user).count()
    _, attacker_challenge = pkce()
    url = authorize_url(base, client_id, attacker_challenge, redirect_uri=ATTACKER_CALLBACK)
    response = session.get(url + "&approval_prompt=auto")
    _consent_page_and_no_code(response)
    assert ATTACKER_CALLBACK in response.text  # the page says where the code would go
    assert Grant.objects.filter(user=person.user).count() == grants_before


@pytest.mark.parametrize(
    "extra",
    ["&approval_prompt=auto", "&approval_prompt=none", "&prompt=none", "&prompt=consent"],
)
def test_no_parameter_skips_consent_even_for_the_exact_same_request(connected, extra):
    base, person, client_id, session = connected
    _, challenge = pkce()
    response = session.get(authorize_url(base, client_id, challenge) + extra)
    _consent_page_and_no_code(response)


def test_an_application_marked_to_skip_authorization_still_asks(connected):
    base, person, client_id, session = connected
    Application.objects.filter(client_id=client_id).update(skip_authorization=True)
    _, challenge = pkce()
    response = session.get(
        authorize_url(base, client_id, challenge, redirect_uri=ATTACKER_CALLBACK)
    )
    _consent_page_and_no_code(response)


def test_another_loopback_port_matches_the_registration_once_the_person_allows(connected):
    # RFC 8252 7.3: the port of a loopback redirect URI is free; that is about matching the
    # registration, and the code still follows only the person's Allow.
    base, person, client_id, session = connected
    verifier, challenge = pkce()
    url = authorize_url(base, client_id, challenge, redirect_uri=ATTACKER_CALLBACK)
    answer = consent(session, url, namespaces=[person.alpha.pk])
    assert answer.status_code == 302
    assert answer.headers["location"].startswith(ATTACKER_CALLBACK)
    assert "code" in query_of(answer)


def test_the_code_needs_the_consent_forms_post_not_a_get_with_its_fields(connected):
    base, person, client_id, session = connected
    _, challenge = pkce()
    url = authorize_url(base, client_id, challenge)
    fields = hidden_fields(session.get(url).text)
    # The form's answer replayed as a GET (a link an attacker could make the person follow).
    replay = session.get(
        "/oauth/authorize",
        params={**fields, "allow": "on", "namespaces": person.alpha.pk, "access": "write"},
    )
    _consent_page_and_no_code(replay)
    assert CALLBACK in replay.text


def test_tokens_from_the_auto_request_are_never_issued(connected):
    base, person, client_id, session = connected
    verifier, challenge = pkce()
    url = authorize_url(base, client_id, challenge, redirect_uri=ATTACKER_CALLBACK)
    session.get(url + "&approval_prompt=auto")
    # Nothing to exchange: the only code is one the attacker could guess, which is none.
    guessed = exchange(base, client_id, "made-up", verifier)
    assert guessed.status_code == 400
    assert guessed.json()["error"] == "invalid_grant"
