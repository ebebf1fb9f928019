"""The whole connection, as a hosted assistant's connector makes it, with the MCP Python SDK's
own OAuth client against the live server: it knows only the MCP URL, gets a 401, reads the
protected resource metadata and the authorization server metadata, registers, sends the person
to log in and consent (real HTTP through the UI's login and consent forms), exchanges the code,
lists tools, stores and searches in the granted namespace, refreshes, and goes on with the
refreshed token."""

from __future__ import annotations

import time
from urllib.parse import parse_qs, urlsplit

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

from apps.access.models import OAuthConnection
from apps.memories.models import Memory
from tests.mcp.client import run, structured, text_of

from .dance import CALLBACK, hidden_fields
from .people import PASSWORD, make_person

pytestmark = pytest.mark.django_db(transaction=True)


class MemoryStorage:
    """The SDK's TokenStorage, kept in memory; remembers every token set it was handed."""

    def __init__(self):
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None
        self.history: list[OAuthToken] = []

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens
        self.history.append(tokens)

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, client_info):
        self.client = client_info


class Browser:
    """What the person does when the SDK opens the authorization URL: log in through the UI's
    login form, then allow the app on the consent page with their choices."""

    def __init__(self, base: str, username: str, namespace_ids: list[int], access: str):
        self.base, self.username = base, username
        self.namespace_ids, self.access = namespace_ids, access
        self.pages: list[str] = []
        self.result: AuthorizationCodeResult | None = None

    async def open(self, authorization_url: str) -> None:
        with httpx.Client(base_url=self.base, follow_redirects=False, timeout=60) as session:
            first = session.get(authorization_url)
            assert first.status_code == 302  # not logged in: to the UI's login page
            login_url = first.headers["location"]
            assert login_url.startswith("/login/?next=")
            self.pages.append("login")
            login_page = session.get(login_url)
            next_url = parse_qs(urlsplit(login_url).query)["next"][0]
            logged_in = session.post(
                "/login/",
                data={
                    **hidden_fields(login_page.text),
                    "username": self.username,
                    "password": PASSWORD,
                    "next": next_url,
                },
            )
            assert logged_in.status_code == 302
            assert logged_in.headers["location"] == next_url
            consent_page = session.get(next_url)
            assert consent_page.status_code == 200
            assert "mcp-sdk-test" in consent_page.text  # which application asks
            self.pages.append("consent")
            answer = session.post(
                next_url,
                data={
                    **hidden_fields(consent_page.text),
                    "namespaces": self.namespace_ids,
                    "access": self.access,
                    "allow": "on",
                },
            )
        assert answer.status_code == 302, answer.text
        location = answer.headers["location"]
        assert location.startswith(CALLBACK)
        query = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
        self.result = AuthorizationCodeResult(
            code=query["code"], state=query.get("state"), iss=query.get("iss")
        )

    async def callback(self) -> AuthorizationCodeResult:
        assert self.result is not None
        return self.result


def test_a_client_knowing_only_the_mcp_url_connects_searches_and_refreshes(asgi_server):
    person = make_person("sdk-alice")
    mcp_url = f"{asgi_server}/mcp"
    storage = MemoryStorage()
    browser = Browser(asgi_server, person.username, [person.alpha.pk], "write")
    provider = OAuthClientProvider(
        server_url=mcp_url,
        client_metadata=OAuthClientMetadata(
            client_name="mcp-sdk-test",
            redirect_uris=[CALLBACK],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=browser.open,
        callback_handler=browser.callback,
    )
    seen: list[tuple[str, str, int]] = []

    async def record(response):
        seen.append((response.request.method, response.request.url.path, response.status_code))

    async def scenario():
        async with (
            httpx2.AsyncClient(
                auth=provider, timeout=60, event_hooks={"response": [record]}
            ) as http,
            Client(streamable_http_client(mcp_url, http_client=http)) as client,
        ):
            names = {tool.name for tool in (await client.list_tools()).tools}
            stored = await client.call_tool(
                "remember",
                {"content": "The deploy script lives in ops/deploy.sh and needs VPN access."},
            )
            found = await client.call_tool("memory_search", {"query": "where is the deploy script"})
            # The access token is short-lived: make the client see it as expired, so its next
            # call refreshes first and goes on with the new token.
            provider.context.token_expiry_time = time.time() - 1
            again = await client.call_tool("memory_search", {"query": "deploy script VPN"})
            return names, stored, found, again

    names, stored, found, again = run(scenario)

    # 401 -> protected resource metadata -> authorization server metadata -> registration ->
    # (login and consent) -> token -> the MCP calls.
    paths = [(method, path) for method, path, _ in seen]
    assert (seen[0][1], seen[0][2]) == ("/mcp", 401)
    first_of = {step: paths.index(step) for step in paths[::-1]}
    assert (
        first_of[("GET", "/.well-known/oauth-protected-resource/mcp")]
        < first_of[("GET", "/.well-known/oauth-authorization-server")]
        < first_of[("POST", "/oauth/register")]
        < first_of[("POST", "/oauth/token")]
    )
    assert browser.pages == ["login", "consent"]
    assert {"memory_search", "remember", "forget"} <= names
    assert not stored.is_error, text_of(stored)
    assert not found.is_error, text_of(found)
    hits = structured(found)["memories"]
    assert hits and "ops/deploy.sh" in hits[0]["content"]
    assert Memory.objects.get(pk=structured(stored)["id"]).namespace == person.alpha

    # Refreshed: a second token set, and the call made with it worked.
    assert [method for method, path, _ in seen].count("POST") >= 3
    assert len(storage.history) == 2
    first, second = storage.history
    assert second.access_token != first.access_token
    assert second.refresh_token and second.refresh_token != first.refresh_token
    assert not again.is_error, text_of(again)
    assert "ops/deploy.sh" in structured(again)["memories"][0]["content"]
    # Rotation: the old access and refresh tokens are gone.
    old = httpx.post(mcp_url, json={}, headers={"Authorization": f"Bearer {first.access_token}"})
    assert old.status_code == 401

    connection = OAuthConnection.objects.get(user=person.user)
    assert connection.application.name == "mcp-sdk-test"
    assert [ns.name for ns in connection.namespaces.all()] == [person.alpha.name]
    assert connection.read_only is False
    assert connection.last_used_at is not None
