"""Where this server is, as OAuth clients must see it: the issuer (the authorization server) and
the MCP endpoint (the one protected resource, RFC 8707/9728).

Behind a proxy the request's own scheme and host may not be what clients used, so
settings.PUBLIC_URL (MEMORYHUB_PUBLIC_URL) fixes both; without it they come from the request.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest
from starlette.types import Scope

MCP_PATH = "/mcp"
PRM_PATH = "/.well-known/oauth-protected-resource"


def public_base(request: HttpRequest) -> str:
    return settings.PUBLIC_URL or f"{request.scheme}://{request.get_host()}"


def issuer(request: HttpRequest) -> str:
    return public_base(request)


def mcp_resource(request: HttpRequest) -> str:
    return public_base(request) + MCP_PATH


def base_of_scope(scope: Scope) -> str:
    """public_base() for a raw ASGI request (the MCP gate runs outside Django)."""
    if settings.PUBLIC_URL:
        return settings.PUBLIC_URL
    headers = dict(scope.get("headers") or [])
    host = headers.get(b"host", b"").decode("latin-1")
    if not host:
        server = scope.get("server") or ("localhost", None)
        host = server[0] if not server[1] else f"{server[0]}:{server[1]}"
    return f"{scope.get('scheme', 'http')}://{host}"


def mcp_resource_of_scope(scope: Scope) -> str:
    return base_of_scope(scope) + MCP_PATH


def metadata_url_of_scope(scope: Scope) -> str:
    """The protected resource metadata of /mcp (RFC 9728's path form), for the 401 challenge."""
    return base_of_scope(scope) + PRM_PATH + MCP_PATH


def same_resource(given: str, expected: str) -> bool:
    """Whether a client's `resource` names this MCP endpoint (a trailing slash is the same)."""
    return given.rstrip("/") == expected.rstrip("/")
