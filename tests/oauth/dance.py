"""An OAuth client scripted step by step over real HTTP, for the tests that need to go wrong
at one precise step (a wrong verifier, a reused code, a foreign resource). The whole dance as
an MCP client does it is tests/oauth/test_oauth_flow.py's, with the SDK's own provider."""

from __future__ import annotations

import base64
import hashlib
import secrets
from html.parser import HTMLParser
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx

CALLBACK = "http://127.0.0.1:8976/callback"
TOOLS_LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


class _FormFields(HTMLParser):
    """The named inputs of the page's forms (hidden fields and the CSRF token)."""

    def __init__(self):
        super().__init__()
        self.fields: dict[str, str] = {}

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "input" and attrs.get("type") == "hidden" and attrs.get("name"):
            self.fields[attrs["name"]] = attrs.get("value") or ""


def hidden_fields(html: str) -> dict[str, str]:
    parser = _FormFields()
    parser.feed(html)
    return parser.fields


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
    return verifier, challenge.decode().rstrip("=")


def register(base: str, redirect_uri: str = CALLBACK, name: str = "test client") -> str:
    response = httpx.post(
        f"{base}/oauth/register",
        json={
            "client_name": name,
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_method": "none",
        },
    )
    assert response.status_code == 201, response.text
    return response.json()["client_id"]


def login(base: str, username: str, password: str) -> httpx.Client:
    """A browser-like session logged in through the UI's login form."""
    session = httpx.Client(base_url=base, follow_redirects=False, timeout=60)
    page = session.get("/login/")
    fields = hidden_fields(page.text)
    answer = session.post(
        "/login/", data={**fields, "username": username, "password": password, "next": "/"}
    )
    assert answer.status_code == 302, answer.text
    return session


def authorize_url(
    base: str,
    client_id: str,
    challenge: str,
    *,
    redirect_uri: str = CALLBACK,
    method: str = "S256",
    resource: str | None = None,
    state: str = "state-1",
) -> str:
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "code_challenge": challenge,
        "code_challenge_method": method,
        "state": state,
        "scope": "mcp",
        "resource": resource or f"{base}/mcp",
    }
    return f"{base}/oauth/authorize?{urlencode(params)}"


def consent(
    session: httpx.Client,
    url: str,
    *,
    namespaces: list[int],
    access: str = "read",
    allow: bool = True,
    tamper: dict | None = None,
) -> httpx.Response:
    """Open the consent page and answer it (with some hidden fields changed, if `tamper`);
    returns the answer (a redirect on success)."""
    page = session.get(url)
    assert page.status_code == 200, page.text
    data: dict = {**hidden_fields(page.text), "namespaces": namespaces, "access": access}
    data.update(tamper or {})
    if allow:
        data["allow"] = "on"
    return session.post(url, data=data)


def query_of(response: httpx.Response) -> dict[str, str]:
    location = response.headers["location"]
    return {key: values[0] for key, values in parse_qs(urlsplit(location).query).items()}


def code_for(session, base, client_id, *, namespaces, access="read") -> tuple[str, str]:
    """(code, verifier) after a consent that allows."""
    verifier, challenge = pkce()
    answer = consent(
        session,
        authorize_url(base, client_id, challenge),
        namespaces=namespaces,
        access=access,
    )
    assert answer.status_code == 302, answer.text
    return query_of(answer)["code"], verifier


def exchange(
    base: str,
    client_id: str,
    code: str,
    verifier: str,
    *,
    resource: str | None = None,
    redirect_uri: str = CALLBACK,
) -> httpx.Response:
    return httpx.post(
        f"{base}/oauth/token",
        data={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "client_id": client_id,
            "code_verifier": verifier,
            "resource": resource or f"{base}/mcp",
        },
    )


def refresh(base: str, client_id: str, refresh_token: str) -> httpx.Response:
    return httpx.post(
        f"{base}/oauth/token",
        data={
            "grant_type": "refresh_token",
            "refresh_token": refresh_token,
            "client_id": client_id,
        },
    )


def tokens_for(session, base, client_id, *, namespaces, access="read") -> dict:
    code, verifier = code_for(session, base, client_id, namespaces=namespaces, access=access)
    response = exchange(base, client_id, code, verifier)
    assert response.status_code == 200, response.text
    return response.json()


def mcp_status(base: str, access_token: str) -> int:
    """The status of an MCP tools/list with this bearer token."""
    response = httpx.post(
        f"{base}/mcp",
        json=TOOLS_LIST,
        headers={**MCP_HEADERS, "Authorization": f"Bearer {access_token}"},
    )
    return response.status_code
