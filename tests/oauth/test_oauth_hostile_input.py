"""Hostile input at every OAuth endpoint, over real HTTP against the live server: each
parameter of each endpoint in turn gets a NUL byte, invalid UTF-8, a (UTF-8 encoded) lone
surrogate, a very long value, control characters, and so on; then the bodies themselves go
wrong (not JSON, deeply nested JSON, a wrong content type, repeated parameters). Whatever comes
in, the answer is never a 5xx: a 4xx in RFC 6749/7591's error shape (or the consent page's
error, for the browser), or a 200/201/302 where the input is acceptable after all."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from urllib.parse import parse_qs, quote, urlsplit

import httpx
import pytest
from oauth2_provider.models import Application

from .dance import CALLBACK, hidden_fields, login, pkce, register, tokens_for
from .people import PASSWORD, make_person

pytestmark = pytest.mark.django_db(transaction=True)

# Already percent-encoded, so the bytes on the wire are exactly these.
HOSTILE_QUERY_VALUES = {
    "nul": "%00",
    "nul inside": "abc%00def",
    "invalid utf-8": "%FF%FE%FD",
    "lone surrogate as utf-8": "%ED%A0%80",
    "overlong utf-8": "%C0%AF",
    "very long": "a" * 6000,
    "crlf": "a%0D%0Ab",
    "control characters": "%01%02%1B%7F",
    "empty": "",
    "bad percent escape": "%zz%",
    "emoji and accents": quote("é😀"),
    "javascript": quote("javascript:alert(1)"),
}
# As JSON strings in a registration body: JSON's own escapes reach the server as characters.
HOSTILE_JSON_STRINGS = {
    "nul": "a\u0000b",
    "lone surrogate": "\ud800",
    "lone low surrogate": "x\udfffy",
    "very long": "n" * 100_000,
    "control characters": "\u0001\u001b\u007f",
    "empty": "",
    "emoji": "é😀",
    "crlf": "a\r\nb",
}

# Redirect URIs that play on schemes: none may be registered, and none is redirected to by a
# client registered with CALLBACK and Cursor's own scheme (RFC 8252 7.1).
CURSOR = "cursor://anysphere.cursor-retrieval/oauth/callback"
SCHEME_TRICKS = {
    "javascript": "javascript:alert(1)",
    "javascript mixed case": "JaVaScRiPt:alert(1)",
    "javascript with authority": "javascript://anysphere.cursor-retrieval/%0Aalert(1)",
    "javascript behind a tab": "java\tscript:alert(1)",
    "javascript behind a space": " javascript:alert(1)",
    "vbscript": "vbscript:msgbox(1)",
    "data html": "data:text/html,<script>alert(1)</script>",
    "data base64": "data:text/html;base64,PHNjcmlwdD4=",
    "file": "file:///etc/passwd",
    "blob": "blob:https://evil.example/1",
    "view-source": "view-source:https://evil.example/",
    "app scheme carrying javascript": "cursor:javascript:alert(1)",
    "app scheme with userinfo": "cursor://anysphere.cursor-retrieval@evil.example/oauth/callback",
    "app scheme with a fragment": CURSOR + "#x",
    "app scheme, three slashes": "cursor:///oauth/callback",
    "unknown bare scheme": "notanapp:/callback",
    "scheme-relative": "//evil.example/callback",
    "no scheme": "evil.example/callback",
    "http elsewhere": "http://evil.example/callback",
    "unclosed ipv6": "http://[::1",
}
# Registrable by some client, but not this one's: never followed.
FOREIGN_REDIRECTS = {
    "app scheme, another host": "cursor://evil.example/oauth/callback",
    "app scheme, another path": CURSOR + "/../../elsewhere",
    "app scheme with a query": CURSOR + "?next=https://evil.example",
    "another reverse domain": "com.example.app:/oauth/callback",
    "https elsewhere": "https://evil.example/callback",
}
AUTHORIZE_PARAMETERS = [
    "client_id",
    "redirect_uri",
    "response_type",
    "code_challenge",
    "code_challenge_method",
    "state",
    "scope",
    "resource",
    "approval_prompt",
    "prompt",
    "nonce",
]
CONSENT_FIELDS = [
    "client_id",
    "redirect_uri",
    "response_type",
    "code_challenge",
    "code_challenge_method",
    "state",
    "scope",
    "resource",
    "namespaces",
    "access",
    "allow",
]
TOKEN_PARAMETERS = [
    "grant_type",
    "code",
    "redirect_uri",
    "client_id",
    "code_verifier",
    "resource",
    "refresh_token",
]
REVOKE_PARAMETERS = ["token", "token_type_hint", "client_id"]
REGISTRATION_FIELDS = [
    "client_name",
    "redirect_uris",
    "grant_types",
    "response_types",
    "token_endpoint_auth_method",
    "scope",
]
METADATA_PATHS = [
    "/.well-known/oauth-authorization-server",
    "/.well-known/oauth-protected-resource",
    "/.well-known/oauth-protected-resource/mcp",
]


@dataclass
class Probe:
    name: str
    method: str
    path: str
    query: str = ""
    body: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)


def _form(params: dict[str, str]) -> str:
    """A query string or form body of already-encoded values, in the given order."""
    return "&".join(f"{key}={value}" for key, value in params.items())


def _encoded(params: dict[str, str]) -> dict[str, str]:
    return {key: quote(value, safe="") for key, value in params.items()}


FORM = {"Content-Type": "application/x-www-form-urlencoded"}
JSON_TYPE = {"Content-Type": "application/json"}


def authorize_probes(client_id: str, challenge: str, base: str) -> list[Probe]:
    valid = _encoded(
        {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": CALLBACK,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "state": "s",
            "scope": "mcp",
            "resource": f"{base}/mcp",
        }
    )
    probes = []
    for parameter in AUTHORIZE_PARAMETERS:
        for label, value in HOSTILE_QUERY_VALUES.items():
            query = _form({**valid, parameter: value})
            probes.append(Probe(f"authorize {parameter}={label}", "GET", "/oauth/authorize", query))
        # Repeated: the same parameter twice with two different values.
        query = _form(valid) + f"&{parameter}=other"
        probes.append(Probe(f"authorize {parameter} twice", "GET", "/oauth/authorize", query))
    for label, uri in {**SCHEME_TRICKS, **FOREIGN_REDIRECTS}.items():
        query = _form({**valid, "redirect_uri": quote(uri, safe="")})
        probes.append(Probe(f"authorize redirect {label}", "GET", "/oauth/authorize", query))
    # The attack of issue 42: the person has a live token; approval_prompt=auto from any
    # loopback port with the attacker's own PKCE challenge must still meet the consent page.
    for port in (1024, 8976, 49152, 65535):
        redirect = quote(f"http://127.0.0.1:{port}/callback", safe="")
        query = _form({**valid, "redirect_uri": redirect, "approval_prompt": "auto"})
        probes.append(Probe(f"authorize auto on port {port}", "GET", "/oauth/authorize", query))
    return probes


def consent_probes(fields: dict[str, str]) -> list[Probe]:
    """The consent form posted back with one field made hostile (CSRF token kept valid)."""
    valid = _encoded(fields)
    probes = []
    for name in CONSENT_FIELDS:
        for label, value in HOSTILE_QUERY_VALUES.items():
            body = _form({**valid, name: value}).encode()
            probes.append(Probe(f"consent {name}={label}", "POST", "", "", body, dict(FORM)))
    return probes


def token_probes(client_id: str) -> list[Probe]:
    valid = _encoded(
        {
            "grant_type": "authorization_code",
            "code": "made-up-code",
            "redirect_uri": CALLBACK,
            "client_id": client_id,
            "code_verifier": "v" * 50,
        }
    )
    probes = []
    for parameter in TOKEN_PARAMETERS:
        for label, value in HOSTILE_QUERY_VALUES.items():
            body = _form({**valid, parameter: value}).encode()
            probes.append(
                Probe(f"token {parameter}={label}", "POST", "/oauth/token", "", body, FORM)
            )
        body = (_form(valid) + f"&{parameter}=other").encode()
        probes.append(Probe(f"token {parameter} twice", "POST", "/oauth/token", "", body, FORM))
    wrong_bodies = {
        "json body": (json.dumps({"grant_type": "authorization_code"}).encode(), JSON_TYPE),
        "text body": (b"grant_type=authorization_code", {"Content-Type": "text/plain"}),
        "multipart body": (
            b'--x\r\nContent-Disposition: form-data; name="grant_type"\r\n\r\ncode\r\n--x--\r\n',
            {"Content-Type": "multipart/form-data; boundary=x"},
        ),
        "broken multipart": (b"--x\r\ngarbage", {"Content-Type": "multipart/form-data"}),
        "empty body": (b"", FORM),
        "binary body": (bytes(range(256)), FORM),
        "no content type": (_form(valid).encode(), {}),
        "charset not utf-8": (
            _form(valid).encode(),
            {"Content-Type": f"{FORM['Content-Type']}; charset=nope"},
        ),
    }
    for label, (body, headers) in wrong_bodies.items():
        probes.append(Probe(f"token {label}", "POST", "/oauth/token", "", body, dict(headers)))
    probes.append(Probe("token by GET", "GET", "/oauth/token", _form(valid)))
    return probes


def revoke_probes(client_id: str) -> list[Probe]:
    valid = _encoded(
        {"token": "made-up-token", "token_type_hint": "access_token", "client_id": client_id}
    )
    probes = []
    for parameter in REVOKE_PARAMETERS:
        for label, value in HOSTILE_QUERY_VALUES.items():
            body = _form({**valid, parameter: value}).encode()
            probes.append(
                Probe(f"revoke {parameter}={label}", "POST", "/oauth/revoke", "", body, FORM)
            )
        body = (_form(valid) + f"&{parameter}=other").encode()
        probes.append(Probe(f"revoke {parameter} twice", "POST", "/oauth/revoke", "", body, FORM))
    probes.append(
        Probe("revoke json body", "POST", "/oauth/revoke", "", b'{"token": "x"}', JSON_TYPE)
    )
    probes.append(Probe("revoke by GET", "GET", "/oauth/revoke", _form(valid)))
    return probes


def registration_probes() -> list[Probe]:
    valid = {
        "client_name": "probe",
        "redirect_uris": [CALLBACK],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }
    probes = []
    for name in REGISTRATION_FIELDS:
        for label, value in HOSTILE_JSON_STRINGS.items():
            # Lists hold the hostile string as their one item; the rest take it as they are.
            hostile = [value] if isinstance(valid.get(name), list) else value
            body = json.dumps({**valid, name: hostile}).encode()
            probes.append(
                Probe(f"register {name}={label}", "POST", "/oauth/register", "", body, JSON_TYPE)
            )
        for label, odd in {
            "number": 7,
            "object": {"a": 1},
            "null": None,
            "list of numbers": [1],
        }.items():
            body = json.dumps({**valid, name: odd}).encode()
            probes.append(
                Probe(f"register {name} as {label}", "POST", "/oauth/register", "", body, JSON_TYPE)
            )
    for label, uri in SCHEME_TRICKS.items():
        body = json.dumps({**valid, "redirect_uris": [uri]}).encode()
        probes.append(
            Probe(f"register redirect {label}", "POST", "/oauth/register", "", body, JSON_TYPE)
        )
    bodies = {
        "nested arrays": b"[" * 100_000 + b"]" * 100_000,
        "nested objects": b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
        "nested client_name": json.dumps({**valid, "client_name": "x"})
        .encode()
        .replace(b'"x"', b"[" * 30_000 + b"]" * 30_000),
        "not json": b"client_name=x",
        "truncated json": b'{"client_name": "x",',
        "json array": b"[]",
        "json string": b'"x"',
        "invalid utf-8": b'{"client_name": "\xff\xfe"}',
        "nul byte raw": b'{"client_name": "a\x00b"}',
        "nan": b'{"client_name": NaN, "redirect_uris": ["' + CALLBACK.encode() + b'"]}',
        "huge number": b'{"client_name": 1' + b"0" * 5000 + b"}",
        "empty": b"",
        "duplicate keys": b'{"client_name": "a", "client_name": "\\u0000"}',
        "very long body": json.dumps({**valid, "extra": "z" * 2_000_000}).encode(),
    }
    for label, body in bodies.items():
        probes.append(Probe(f"register {label}", "POST", "/oauth/register", "", body, JSON_TYPE))
    for label, content_type in {
        "form content type": FORM["Content-Type"],
        "text content type": "text/plain",
        "no content type": "",
    }.items():
        headers = {"Content-Type": content_type} if content_type else {}
        body = json.dumps(valid).encode()
        probes.append(Probe(f"register {label}", "POST", "/oauth/register", "", body, headers))
    probes.append(Probe("register by GET", "GET", "/oauth/register"))
    return probes


def metadata_probes() -> list[Probe]:
    probes = []
    for path in METADATA_PATHS:
        for label, value in HOSTILE_QUERY_VALUES.items():
            probes.append(Probe(f"{path}?x={label}", "GET", path, _form({"resource": value})))
        probes.append(Probe(f"{path} by POST", "POST", path, "", b"x", FORM))
    return probes


@pytest.fixture
def world(asgi_server, settings):
    settings.OAUTH_REGISTRATION_RATE_LIMIT = "100000/hour"  # the probes, not the limit, here
    person = make_person("prober")
    client_id = register(asgi_server)
    session = login(asgi_server, person.username, PASSWORD)
    # A live token for the app: the state in which approval_prompt=auto used to skip consent.
    tokens_for(session, asgi_server, client_id, namespaces=[person.alpha.pk])
    yield asgi_server, person, client_id, session
    session.close()


def _send(http: httpx.Client, probe: Probe) -> httpx.Response:
    url = probe.path + (f"?{probe.query}" if probe.query else "")
    return http.request(probe.method, url, content=probe.body, headers=probe.headers)


def _problem(probe: Probe, response: httpx.Response, *, browser: bool) -> str | None:
    """Why this answer is wrong for a hostile request, or None."""
    status = response.status_code
    if status >= 500:
        return f"{status}"
    if status == 302:
        location = response.headers.get("location", "")
        if location.startswith("/login/"):
            return None
        query = parse_qs(urlsplit(location).query)
        if not location.startswith(CALLBACK.split("/callback")[0]):
            return f"302 to an unregistered place: {location[:120]}"
        if "code" in query and probe.method == "GET":
            return "302 with a code and no consent page"
        if "code" not in query and "error" not in query:
            return f"302 without code or error: {location[:120]}"
        return None
    if status in (200, 201):
        return None
    if 400 <= status < 500:
        if browser and "text/html" in response.headers.get("content-type", ""):
            if "This connection cannot go on" in response.text or 'class="error"' in response.text:
                return None
            return f"{status} HTML page without an error message"
        try:
            error = response.json().get("error")
        except ValueError:
            return f"{status} not JSON: {response.text[:120]!r}"
        if not isinstance(error, str) or not error:
            return f"{status} JSON without 'error': {response.text[:120]!r}"
        return None
    return f"unexpected {status}"


def _run(base: str, probes: list[Probe], http: httpx.Client, *, browser: bool = False) -> list[str]:
    wrong = []
    for probe in probes:
        response = _send(http, probe)
        problem = _problem(probe, response, browser=browser)
        if problem:
            wrong.append(f"{probe.name}: {problem}")
    return wrong


def test_the_probe_set_is_large(asgi_server):
    _, challenge = pkce()
    total = (
        len(authorize_probes("c", challenge, asgi_server))
        + len(consent_probes({name: "x" for name in CONSENT_FIELDS}))
        + len(token_probes("c"))
        + len(revoke_probes("c"))
        + len(registration_probes())
        + len(metadata_probes())
    )
    assert total >= 300


def test_the_authorization_endpoint_never_fails(world):
    base, person, client_id, session = world
    _, challenge = pkce()
    probes = authorize_probes(client_id, challenge, base)
    assert not (wrong := _run(base, probes, session, browser=True)), "\n".join(wrong)
    # Logged out, the same requests lead to the login page or to an error, never a 5xx.
    with httpx.Client(base_url=base, timeout=60) as anonymous:
        assert not (wrong := _run(base, probes, anonymous, browser=True)), "\n".join(wrong)


def test_the_consent_form_never_fails(world):
    base, person, client_id, session = world
    _, challenge = pkce()
    url = (
        f"/oauth/authorize?response_type=code&client_id={client_id}&redirect_uri={quote(CALLBACK)}"
        f"&code_challenge={challenge}&code_challenge_method=S256&state=s&scope=mcp"
    )
    page = session.get(url)
    assert page.status_code == 200, page.text
    fields = {
        **hidden_fields(page.text),
        "namespaces": str(person.alpha.pk),
        "access": "read",
        "allow": "on",
    }
    probes = consent_probes(fields)
    for probe in probes:
        probe.path, probe.query = url.split("?", 1)[0], url.split("?", 1)[1]
    assert not (wrong := _run(base, probes, session, browser=True)), "\n".join(wrong)


def test_the_token_endpoint_never_fails(world):
    base, person, client_id, session = world
    with httpx.Client(base_url=base, timeout=60) as http:
        assert not (wrong := _run(base, token_probes(client_id), http)), "\n".join(wrong)


def test_the_revocation_endpoint_never_fails(world):
    base, person, client_id, session = world
    with httpx.Client(base_url=base, timeout=60) as http:
        assert not (wrong := _run(base, revoke_probes(client_id), http)), "\n".join(wrong)


def test_registration_never_fails_and_stores_only_what_it_accepted(world):
    base, *_ = world
    before = Application.objects.count()
    probes = registration_probes()
    with httpx.Client(base_url=base, timeout=60) as http:
        assert not (wrong := _run(base, probes, http)), "\n".join(wrong)
    names = list(Application.objects.values_list("name", flat=True)[before:])
    assert all("\x00" not in name and len(name) <= 255 for name in names)


def test_the_metadata_never_fails(world):
    base, *_ = world
    with httpx.Client(base_url=base, timeout=60) as http:
        assert not (wrong := _run(base, metadata_probes(), http)), "\n".join(wrong)


def test_redirect_scheme_tricks_are_never_registered_nor_followed(world):
    base, person, _, session = world
    client_id = register(base, redirect_uri=CURSOR)
    with httpx.Client(base_url=base, timeout=60) as http:
        for label, uri in SCHEME_TRICKS.items():
            registered = http.post("/oauth/register", json={"redirect_uris": [CALLBACK, uri]})
            assert registered.status_code == 400, label
            assert registered.json()["error"] == "invalid_redirect_uri", label
    _, challenge = pkce()
    valid = {
        "response_type": "code",
        "client_id": client_id,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": "s",
        "scope": "mcp",
    }
    for label, uri in {**SCHEME_TRICKS, **FOREIGN_REDIRECTS}.items():
        page = session.get("/oauth/authorize", params={**valid, "redirect_uri": uri})
        assert page.status_code == 400, label
        assert "location" not in page.headers, label
        assert "This connection cannot go on" in page.text or 'class="error"' in page.text
