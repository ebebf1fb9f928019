"""OAuth discovery answers for MCP clients: this server takes bearer tokens, not OAuth.

MCP Inspector and mcp-remote react to a 401 by probing the OAuth discovery documents and trying
dynamic client registration. Answered with Django's HTML 404 they showed "Dynamic Client
Registration rejected (HTTP 404)" and never the server's own message. These views answer in
JSON: the protected-resource metadata (RFC 9728) lists no authorization server and the header
bearer method; authorization-server metadata and registration answer an OAuth-style error whose
description says how to authenticate.
"""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt

HOW = (
    "memoryhub does not offer OAuth. Send an API token in the header "
    "'Authorization: Bearer <token>' (create one with "
    "`python manage.py create_token --namespace NAME` or on the UI's Connect page)."
)


def _base(request: HttpRequest) -> str:
    return f"{request.scheme}://{request.get_host()}"


@csrf_exempt
def protected_resource(request: HttpRequest) -> JsonResponse:
    return JsonResponse(
        {
            "resource": f"{_base(request)}/mcp",
            "resource_name": "memoryhub",
            "authorization_servers": [],
            "bearer_methods_supported": ["header"],
            "resource_documentation": f"{_base(request)}/api/docs/",
            "description": HOW,
        }
    )


@csrf_exempt
def no_oauth(request: HttpRequest) -> JsonResponse:
    """Authorization-server metadata, /register, /authorize, /token: not offered."""
    return JsonResponse({"error": "unsupported", "error_description": HOW}, status=404)
