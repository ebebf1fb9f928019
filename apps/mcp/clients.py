"""Which MCP client a write came from: its clientInfo (name and version), for provenance.

A client of the 2026 protocol sends clientInfo with every request, and the SDK hands it to the
tool (ctx.session.client_params). A client of the older protocol sends it once, in
`initialize`; over stateless HTTP the tool call that follows arrives on a connection of its own
without it. For those, the gate notes the clientInfo of each `initialize` under the credential
that sent it (in this process's cache, for a day), and a tool call without clientInfo is
credited to the client that last introduced itself with the same credential.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.cache import cache
from mcp.server.mcpserver import Context
from starlette.types import Message, Receive

from apps.memories.provenance import Origin, client_label

from .runtime import SCOPE_TOKEN_KEY

NOTED_SECONDS = 24 * 3600


def _key(principal: Any) -> str:
    return f"mcp-client:{principal._meta.label_lower}:{principal.pk}"


async def noting_initialize(receive: Receive, principal: Any) -> Receive:
    """`receive` again, after noting the clientInfo of an `initialize` in the request body."""
    messages: list[Message] = []
    body = b""
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            break
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    if b'"initialize"' in body:
        label = _initialize_client(body)
        if label:
            await cache.aset(_key(principal), label, NOTED_SECONDS)

    async def replay() -> Message:
        return messages.pop(0) if messages else await receive()

    return replay


def _initialize_client(body: bytes) -> str:
    try:
        found = json.loads(body)
    except ValueError:
        return ""
    for message in found if isinstance(found, list) else [found]:
        if isinstance(message, dict) and message.get("method") == "initialize":
            info = (message.get("params") or {}).get("clientInfo") or {}
            if isinstance(info, dict):
                return client_label(str(info.get("name") or ""), str(info.get("version") or ""))
    return ""


async def client_of(ctx: Context) -> Origin:
    """The Origin of a tool call: the client as it introduced itself."""
    params = getattr(ctx.session, "client_params", None)
    info = getattr(params, "client_info", None)
    if info is not None:
        return Origin(client=client_label(info.name, info.version))
    request = ctx.request_context.request
    principal = request.scope.get(SCOPE_TOKEN_KEY) if request is not None else None
    if principal is None:
        return Origin()
    return Origin(client=await cache.aget(_key(principal), ""))
