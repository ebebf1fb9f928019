"""OAuth URLs. `protocol_patterns` are mounted at the site root under the namespace
django-oauth-toolkit's metadata view reverses ("oauth2_provider"); `page_patterns` are the
people's pages, under "oauth"."""

from __future__ import annotations

from django.conf import settings
from django.urls import path
from oauth2_provider import views as dot

from . import views

protocol_patterns = [
    path(
        ".well-known/oauth-authorization-server",
        views.oauth_endpoint(dot.OAuthServerMetadataView.as_view(), methods=("GET", "HEAD")),
        name="oauth-server-metadata",
    ),
    path(
        ".well-known/oauth-protected-resource",
        views.oauth_endpoint(views.ProtectedResourceMetadata.as_view(), methods=("GET", "HEAD")),
        name="oauth-resource-metadata",
    ),
    # RFC 9728's form for a resource with a path: the metadata of /mcp.
    path(
        ".well-known/oauth-protected-resource/mcp",
        views.oauth_endpoint(views.ProtectedResourceMetadata.as_view(), methods=("GET", "HEAD")),
        name="oauth-resource-metadata-mcp",
    ),
    path("oauth/authorize", views.ConsentView.as_view(), name="authorize"),
    path("oauth/token", views.oauth_endpoint(dot.TokenView.as_view()), name="token"),
    path("oauth/revoke", views.oauth_endpoint(dot.RevokeTokenView.as_view()), name="revoke-token"),
    path("oauth/register", views.oauth_endpoint(views.register), name="dcr-register"),
]

if settings.PATH_PREFIX:
    # Under a path prefix the RFC 8414 and RFC 9728 addresses put the issuer's and the
    # resource's path after the well-known name, at the host's root
    # (https://example.org/.well-known/oauth-authorization-server/memory); the proxy passes
    # them on (ops/nginx.conf.template). The same documents are also under the prefix.
    protocol_patterns += [
        path(
            f".well-known/oauth-authorization-server{settings.PATH_PREFIX}",
            views.oauth_endpoint(dot.OAuthServerMetadataView.as_view(), methods=("GET", "HEAD")),
            name="oauth-server-metadata-inserted",
        ),
        path(
            f".well-known/oauth-protected-resource{settings.PATH_PREFIX}/mcp",
            views.oauth_endpoint(
                views.ProtectedResourceMetadata.as_view(), methods=("GET", "HEAD")
            ),
            name="oauth-resource-metadata-inserted",
        ),
    ]

page_patterns = [
    path("connect/apps/", views.connections_page, name="connections"),
    path("connect/apps/<int:connection_id>/revoke/", views.revoke, name="revoke"),
]
