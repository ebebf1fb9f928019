"""Discovery and registration as a client meets them: the 401 names the protected resource
metadata, which names this server as authorization server, whose metadata lists the endpoints
and S256 only; registration takes public clients with https or loopback redirect URIs, refuses
the rest with the field named, is rate-limited, and shows in the admin."""

from __future__ import annotations

import httpx
import pytest
from oauth2_provider.models import Application

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_401_leads_to_the_metadata_and_the_metadata_to_the_endpoints(asgi_server):
    unauthorized = httpx.post(f"{asgi_server}/mcp", json={})
    assert unauthorized.status_code == 401
    challenge = unauthorized.headers["www-authenticate"]
    prm_url = f"{asgi_server}/.well-known/oauth-protected-resource/mcp"
    assert f'resource_metadata="{prm_url}"' in challenge
    for url in (prm_url, f"{asgi_server}/.well-known/oauth-protected-resource"):
        prm = httpx.get(url).json()
        assert prm["resource"] == f"{asgi_server}/mcp"
        assert prm["authorization_servers"] == [asgi_server]
        assert prm["bearer_methods_supported"] == ["header"]
    meta = httpx.get(f"{asgi_server}/.well-known/oauth-authorization-server").json()
    assert meta["issuer"] == asgi_server
    assert meta["authorization_endpoint"] == f"{asgi_server}/oauth/authorize"
    assert meta["token_endpoint"] == f"{asgi_server}/oauth/token"
    assert meta["registration_endpoint"] == f"{asgi_server}/oauth/register"
    assert meta["code_challenge_methods_supported"] == ["S256"]
    assert meta["response_types_supported"] == ["code"]
    assert set(meta["grant_types_supported"]) == {"authorization_code", "refresh_token"}
    assert meta["token_endpoint_auth_methods_supported"] == ["none"]
    oidc = httpx.get(f"{asgi_server}/.well-known/openid-configuration")
    assert oidc.status_code == 404
    assert "oauth-authorization-server" in oidc.json()["error_description"]


def test_the_public_url_setting_fixes_issuer_and_resource_behind_a_proxy(asgi_server, settings):
    settings.PUBLIC_URL = "https://memory.example.com"
    challenge = httpx.post(f"{asgi_server}/mcp", json={}).headers["www-authenticate"]
    assert (
        'resource_metadata="https://memory.example.com/.well-known/oauth-protected-resource/mcp"'
        in challenge
    )
    prm = httpx.get(f"{asgi_server}/.well-known/oauth-protected-resource/mcp").json()
    assert prm["resource"] == "https://memory.example.com/mcp"
    assert prm["authorization_servers"] == ["https://memory.example.com"]


@pytest.mark.parametrize(
    ("metadata", "error", "field"),
    [
        ({"redirect_uris": ["http://evil.example/cb"]}, "invalid_redirect_uri", "redirect_uris"),
        ({"redirect_uris": ["https://a.example/cb#frag"]}, "invalid_redirect_uri", "fragment"),
        ({"redirect_uris": []}, "invalid_redirect_uri", "redirect_uris"),
        ({"redirect_uris": "https://a.example/cb"}, "invalid_client_metadata", "redirect_uris"),
        (
            {
                "redirect_uris": ["https://a.example/cb"],
                "token_endpoint_auth_method": "private_key_jwt",
            },
            "invalid_client_metadata",
            "token_endpoint_auth_method",
        ),
        (
            {"redirect_uris": ["https://a.example/cb"], "grant_types": ["implicit"]},
            "invalid_client_metadata",
            "grant_types",
        ),
        (
            {"redirect_uris": ["https://a.example/cb"], "response_types": ["token"]},
            "invalid_client_metadata",
            "response_types",
        ),
        ([1, 2], "invalid_client_metadata", "body"),
    ],
)
def test_registration_refuses_what_it_cannot_serve_naming_the_field(
    asgi_server, metadata, error, field
):
    before = Application.objects.count()
    response = httpx.post(f"{asgi_server}/oauth/register", json=metadata)
    assert response.status_code == 400
    assert response.json()["error"] == error
    assert field in response.json()["error_description"]
    assert Application.objects.count() == before


def test_registration_takes_loopback_on_any_port_and_https(asgi_server):
    response = httpx.post(
        f"{asgi_server}/oauth/register",
        json={
            "client_name": "Claude",
            # Asked for a secret: registered public all the same, and told so.
            "token_endpoint_auth_method": "client_secret_post",
            "redirect_uris": [
                "http://localhost:53682/callback",
                "http://127.0.0.1:1234/cb",
                "https://claude.ai/api/mcp/auth_callback",
            ],
        },
    )
    assert response.status_code == 201
    body = response.json()
    assert body["token_endpoint_auth_method"] == "none"
    assert "client_secret" not in body
    app = Application.objects.get(client_id=body["client_id"])
    assert app.client_type == Application.CLIENT_PUBLIC
    assert app.registration_source == Application.RegistrationSource.DCR
    assert app.name == "Claude"


def test_registration_is_rate_limited(asgi_server, settings):
    settings.OAUTH_REGISTRATION_RATE_LIMIT = "2/hour"
    before = Application.objects.count()
    metadata = {"redirect_uris": ["http://127.0.0.1:9/cb"]}
    statuses = [
        httpx.post(f"{asgi_server}/oauth/register", json=metadata).status_code for _ in range(3)
    ]
    assert statuses == [201, 201, 429]
    refused = httpx.post(f"{asgi_server}/oauth/register", json=metadata)
    assert int(refused.headers["retry-after"]) > 0
    assert refused.json()["error"] == "rate_limited"
    assert Application.objects.count() == before + 2


def test_registered_apps_and_connections_are_in_the_admin(asgi_server, admin_client):
    httpx.post(
        f"{asgi_server}/oauth/register",
        json={"client_name": "Listed app", "redirect_uris": ["https://x.example/cb"]},
    )
    page = admin_client.get("/admin/oauth2_provider/application/")
    assert page.status_code == 200
    assert "Listed app" in page.content.decode()
    assert admin_client.get("/admin/access/oauthconnection/").status_code == 200
