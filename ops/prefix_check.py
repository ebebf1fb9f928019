"""What a person and an assistant meet when memoryhub is served under a path prefix behind nginx
(MEMORYHUB_PUBLIC_URL=https://example.org/memory/): every page, redirect, link, static file,
REST and MCP call and OAuth address stays under the prefix.

Run by `make prod-check PROD_CHECK_ARGS="--prefix /memory/"` (ops/prod_check.py) and by
tests/core/test_path_prefix.py, against nginx rendered from ops/shape.py. Plain HTTP calls only,
each check one named outcome.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

MCP_HEADERS = {"Accept": "application/json, text/event-stream"}
PROTOCOL_VERSION = "2025-06-18"


@dataclass
class Outcome:
    name: str
    ok: bool
    text: str


def _links(html: str) -> list[str]:
    """Every href, src and form action of a page."""
    return re.findall(r'(?:href|src|action)="([^"]*)"', html)


def _outside(links: list[str], prefix: str) -> list[str]:
    """The site-absolute links that leave the prefix ("/static/x" when it should be
    "/memory/static/x")."""
    return [
        link
        for link in links
        if link.startswith("/") and not link.startswith("//") and not link.startswith(prefix + "/")
    ]


def run_checks(origin: str, prefix: str, token: str, namespace: str) -> list[Outcome]:
    """`origin` is the proxy's scheme and host (http://127.0.0.1:8450), `prefix` the path
    ("/memory"), `token` an API token that may write to `namespace`."""
    prefix = "/" + prefix.strip("/")
    public = origin + prefix
    out: list[Outcome] = []

    def check(name: str, ok: bool, text: str) -> None:
        out.append(Outcome(name, bool(ok), text))

    web = httpx.Client(base_url=origin, follow_redirects=False, timeout=60)
    auth = {"Authorization": f"Bearer {token}"}

    # The UI: the login page, its stylesheet and script, its links; redirects.
    page = web.get(f"{prefix}/login/")
    links = _links(page.text)
    outside = _outside(links, prefix)
    check(
        "login page",
        page.status_code == 200 and links and not outside,
        f"GET {prefix}/login/: {page.status_code}, {len(links)} links, outside the prefix: "
        f"{outside or 'none'}",
    )
    cookie_paths = re.findall(r"[Pp]ath=([^;]+)", page.headers.get("set-cookie", ""))
    check(
        "cookies",
        cookie_paths and all(p == prefix + "/" for p in cookie_paths),
        f"the CSRF cookie's path: {cookie_paths}",
    )
    statics = [link for link in links if link.startswith(f"{prefix}/static/")]
    answers = [(link, web.get(link)) for link in statics]
    check(
        "static files",
        statics and all(r.status_code == 200 and r.content for _, r in answers),
        ", ".join(
            f"{link}: {r.status_code} ({r.headers.get('content-type')})" for link, r in answers
        )
        or "the login page links no static file",
    )
    home = web.get(f"{prefix}/")
    check(
        "login redirect",
        home.status_code == 302
        and home.headers.get("location") == f"{prefix}/login/?next={prefix}/",
        f"GET {prefix}/ without a session: {home.status_code} -> {home.headers.get('location')}",
    )
    slash = web.get(f"{prefix}/login")
    check(
        "trailing-slash redirect",
        slash.status_code == 301 and slash.headers.get("location") == f"{prefix}/login/",
        f"GET {prefix}/login: {slash.status_code} -> {slash.headers.get('location')}",
    )
    bare = web.get(prefix)
    check(
        "the prefix alone",
        bare.status_code in (301, 302)
        and urlsplit(bare.headers.get("location", "")).path in (f"{prefix}/", f"{prefix}/login/"),
        f"GET {prefix}: {bare.status_code} -> {bare.headers.get('location')}",
    )
    docs = web.get(f"{prefix}/api/docs/")
    schema = web.get(f"{prefix}/api/v1/schema/", params={"format": "json"})
    servers = schema.json().get("servers") if schema.status_code == 200 else None
    check(
        "API docs",
        docs.status_code == 200
        and not _outside(_links(docs.text), prefix)
        and f'"{prefix}/api/v1/schema' in docs.text  # the schema it loads
        and servers == [{"url": public}],
        f"GET {prefix}/api/docs/: {docs.status_code}, links outside the prefix: "
        f"{_outside(_links(docs.text), prefix) or 'none'}; the schema's servers "
        f"(where 'Try it out' calls): {servers}",
    )

    # REST: a write and a search that finds it.
    marker = uuid.uuid4().hex[:8]
    content = f"The staging database {marker} is restored from the nightly backup every Monday."
    created = web.post(
        f"{prefix}/api/v1/memories/",
        json={"namespace": namespace, "content": content},
        headers=auth,
    )
    found = web.post(
        f"{prefix}/api/v1/search/",
        json={"namespace": namespace, "query": f"staging database {marker} backup"},
        headers=auth,
    )
    check(
        "REST",
        created.status_code == 201 and found.status_code == 200 and marker in found.text,
        f"POST {prefix}/api/v1/memories/: {created.status_code}; POST {prefix}/api/v1/search/: "
        f"{found.status_code}, finds the new memory: {marker in found.text}",
    )

    # MCP: the challenge names metadata under the prefix; initialize and a tool call.
    refused = web.post(f"{prefix}/mcp", json={}, headers=MCP_HEADERS)
    challenge = refused.headers.get("www-authenticate", "")
    expected_metadata = f"{public}/.well-known/oauth-protected-resource/mcp"
    check(
        "MCP challenge",
        refused.status_code == 401 and f'resource_metadata="{expected_metadata}"' in challenge,
        f"POST {prefix}/mcp without a token: {refused.status_code}, {challenge[:120]}",
    )
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "prefix-check", "version": "1"},
        },
    }
    init = web.post(f"{prefix}/mcp", json=hello, headers={**MCP_HEADERS, **auth})
    server_info = init.json().get("result", {}).get("serverInfo", {}) if init.is_success else {}
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {
            "name": "memory_search",
            "arguments": {"query": f"staging database {marker}", "namespace": namespace},
        },
    }
    session = {**MCP_HEADERS, **auth, "MCP-Protocol-Version": PROTOCOL_VERSION}
    called = web.post(f"{prefix}/mcp", json=call, headers=session)
    text = str(called.json().get("result", {})) if called.is_success else called.text
    check(
        "MCP",
        server_info.get("name") == "memoryhub" and marker in text,
        f"POST {prefix}/mcp initialize: {init.status_code} ({server_info.get('name')}); "
        f"tools/call memory_search: {called.status_code}, finds the new memory: {marker in text}",
    )

    # OAuth metadata, under the prefix and at RFC 8414 / RFC 9728's inserted addresses.
    resource = web.get(f"{prefix}/.well-known/oauth-protected-resource/mcp")
    inserted_resource = web.get(f"/.well-known/oauth-protected-resource{prefix}/mcp")
    prm = resource.json() if resource.status_code == 200 else {}
    check(
        "protected resource metadata",
        prm.get("resource") == f"{public}/mcp"
        and prm.get("authorization_servers") == [public]
        and inserted_resource.status_code == 200
        and inserted_resource.json() == prm,
        f"resource {prm.get('resource')}, authorization_servers "
        f"{prm.get('authorization_servers')}; the same at "
        f"/.well-known/oauth-protected-resource{prefix}/mcp: {inserted_resource.status_code}",
    )
    server = web.get(f"/.well-known/oauth-authorization-server{prefix}")
    appended = web.get(f"{prefix}/.well-known/oauth-authorization-server")
    meta = server.json() if server.status_code == 200 else {}
    urls = {k: v for k, v in meta.items() if k.endswith("_endpoint")}
    check(
        "authorization server metadata",
        meta.get("issuer") == public
        and len(urls) >= 4
        and all(v.startswith(public + "/") for v in urls.values())
        and appended.status_code == 200
        and appended.json() == meta,
        f"GET /.well-known/oauth-authorization-server{prefix}: {server.status_code}, issuer "
        f"{meta.get('issuer')}, {urls}; the same under the prefix: {appended.status_code}",
    )

    # OAuth endpoints: registration, the authorize page's redirect to log in, the token door.
    registered = web.post(
        urls.get("registration_endpoint", f"{public}/oauth/register"),
        json={
            "client_name": "prefix check",
            "redirect_uris": ["http://127.0.0.1:8976/callback"],
            "grant_types": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_method": "none",
        },
    )
    client_id = registered.json().get("client_id") if registered.status_code == 201 else None
    authorize = web.get(
        urls.get("authorization_endpoint", f"{public}/oauth/authorize"),
        params={
            "response_type": "code",
            "client_id": client_id or "none",
            "redirect_uri": "http://127.0.0.1:8976/callback",
            "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
            "code_challenge_method": "S256",
            "scope": "mcp",
            "resource": f"{public}/mcp",
        },
    )
    to_login = authorize.headers.get("location", "")
    exchanged = web.post(
        urls.get("token_endpoint", f"{public}/oauth/token"),
        data={"grant_type": "authorization_code", "code": "nope", "client_id": client_id or ""},
    )
    error = (
        exchanged.json().get("error")
        if "json" in exchanged.headers.get("content-type", "")
        else None
    )
    check(
        "OAuth endpoints",
        client_id
        and authorize.status_code == 302
        and to_login.startswith(f"{prefix}/login/?next={prefix}/oauth/authorize")
        and exchanged.status_code == 400
        and error,
        f"register: {registered.status_code}; authorize without a session: "
        f"{authorize.status_code} -> {to_login[:60]}...; token with a bad code: "
        f"{exchanged.status_code} {error}",
    )
    return out
