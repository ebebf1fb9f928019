"""The OAuth discovery documents this server does not offer: OpenID Connect's, and
authorization-server metadata under a path (the issuer has none).

memoryhub is an OAuth 2.1 authorization server for its MCP endpoint (apps/oauth) without
OpenID Connect. Clients that probe those addresses get a JSON answer that points them at the
OAuth metadata instead of Django's HTML 404 page.
"""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt

HOW = (
    "memoryhub offers OAuth 2.1 without OpenID Connect: see {metadata}. Or send an API token "
    "in the header 'Authorization: Bearer <token>' (created on the UI's Connect page)."
)


@csrf_exempt
def elsewhere(request: HttpRequest) -> JsonResponse:
    metadata = reverse("oauth2_provider:oauth-server-metadata")  # under the path prefix, if any
    return JsonResponse(
        {"error": "unsupported", "error_description": HOW.format(metadata=metadata)}, status=404
    )
