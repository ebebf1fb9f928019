"""Glue between the async MCP server and the synchronous Django services.

Every service call runs in a worker thread (the ORM is synchronous and the embedding model is
CPU-bound, so neither may run on the event loop) and opens and closes its own database
connection there, as a Django request would.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import InterfaceError, OperationalError, close_old_connections
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

from apps.access.models import ApiToken, OAuthConnection
from apps.access.services import token_authenticate
from apps.core.exceptions import NotFound, PermissionDenied, ValidationFailed, VersionConflict
from apps.vectors.embeddings import EmbeddingTimeout
from memoryhub.replica.retry import retry_read

T = TypeVar("T")

# The ASGI scope key under which the HTTP auth wrapper leaves the authenticated token.
SCOPE_TOKEN_KEY = "memoryhub.api_token"

# Set by `manage.py mcp_stdio`: a stdio server process serves exactly one token.
_stdio_raw_token: str | None = None


_threads: ThreadPoolExecutor | None = None


def in_thread(fn: Callable[..., T]) -> Callable[..., Any]:
    """`fn` as a coroutine function that runs in one of the MCP worker threads (a pool of
    settings.MCP_WORKER_THREADS, not the event loop's small default one)."""
    global _threads
    if _threads is None:
        _threads = ThreadPoolExecutor(settings.MCP_WORKER_THREADS, thread_name_prefix="mcp")
    return sync_to_async(fn, thread_sensitive=False, executor=_threads)


def configure_stdio_token(raw: str) -> None:
    global _stdio_raw_token
    _stdio_raw_token = raw


def _call_in_thread(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    close_old_connections()
    try:
        try:
            return fn(*args, **kwargs)
        except (OperationalError, InterfaceError):
            # A read that failed on one database server (replica or primary) runs again on
            # the other one; never after a write.
            if not retry_read():
                raise
            close_old_connections()
            return fn(*args, **kwargs)
    finally:
        close_old_connections()


async def run_sync(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run `fn` in a worker thread and turn service errors into tool errors the model can read."""
    try:
        return await in_thread(_call_in_thread)(fn, *args, **kwargs)
    except ValidationFailed as exc:
        raise ToolError(f"Invalid arguments: {exc.summary()}") from exc
    except (NotFound, PermissionDenied, VersionConflict) as exc:
        raise ToolError(str(exc)) from exc
    except (OperationalError, InterfaceError) as exc:
        raise ToolError("The database is briefly unavailable; retry in a few seconds.") from exc
    except EmbeddingTimeout as exc:
        raise ToolError("The embedding model is busy; retry in a few seconds.") from exc


async def current_token(ctx: Context) -> ApiToken | OAuthConnection:
    """The principal of this call: from the HTTP request (an API token or an OAuth
    connection), or the API token the stdio server was given."""
    request = ctx.request_context.request
    if request is not None:
        token = request.scope.get(SCOPE_TOKEN_KEY)
    else:
        token = await run_sync(token_authenticate, _stdio_raw_token)
    if token is None:
        raise ToolError("Not authenticated: a valid API token is required.")
    return token
