"""The one ASGI application: Django (UI, admin, REST) and, at /mcp, the MCP endpoint.

Serve it with `uvicorn memoryhub.asgi:application`. The lifespan events go to the MCP app,
whose session manager must run while the server is up; Django needs none.
"""

from __future__ import annotations

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings.base")
django_application = get_asgi_application()  # sets Django up before the MCP app imports models

from apps.mcp.server import BearerTokenGate, http_app  # noqa: E402

MCP_PATH = "/mcp"
mcp_application = BearerTokenGate(http_app())


async def application(scope, receive, send):
    if scope["type"] == "lifespan" or _is_mcp(scope):
        await mcp_application(scope, receive, send)
    else:
        await django_application(scope, receive, send)


def _is_mcp(scope) -> bool:
    path = scope.get("path", "")
    return scope["type"] == "http" and (path == MCP_PATH or path.startswith(MCP_PATH + "/"))
