"""The six tool names older memory servers used, kept callable. Each maps onto memory_search
exactly as SPEC section 5 lists it; nothing else happens here."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import Field

from . import ops
from .runtime import current_token, run_sync
from .tools import QUERY_MAX, NamespaceArg, Query

NResults = Annotated[int, Field(description="How many memories to return.", ge=1, le=100)]


async def _search(ctx: Context, namespace: str | None, **params) -> CallToolResult:
    token = await current_token(ctx)
    return await run_sync(ops.search, token, namespace=namespace, **params)


async def retrieve_memory(
    ctx: Context, query: Query, n_results: NResults = 5, namespace: NamespaceArg = None
) -> CallToolResult:
    """Older name of memory_search (hybrid mode)."""
    return await _search(ctx, namespace, query=query, limit=n_results)


async def recall_memory(
    ctx: Context,
    query: Query,
    time_expr: Annotated[
        str | None, Field(description="e.g. 'last week', 'yesterday'.", max_length=200)
    ] = None,
    n_results: NResults = 5,
    namespace: NamespaceArg = None,
) -> CallToolResult:
    """Older name of memory_search with a natural time filter (time_expr)."""
    return await _search(ctx, namespace, query=query, time_expr=time_expr, limit=n_results)


async def recall_by_timeframe(
    ctx: Context,
    start_date: Annotated[str, Field(description="ISO date/date-time: from (inclusive).")],
    end_date: Annotated[str, Field(description="ISO date/date-time: until (exclusive).")],
    n_results: NResults = 5,
    query: Annotated[
        str, Field(description="Optional words to rank by.", max_length=QUERY_MAX)
    ] = "",
    namespace: NamespaceArg = None,
) -> CallToolResult:
    """Older name of memory_search restricted to a time window (after=start_date,
    before=end_date)."""
    return await _search(
        ctx, namespace, query=query, after=start_date, before=end_date, limit=n_results
    )


async def retrieve_with_quality_boost(
    ctx: Context,
    query: Query,
    quality_weight: Annotated[
        float, Field(description="0..1 blend of relevance with quality.", ge=0, le=1)
    ] = 0.3,
    n_results: NResults = 10,
    namespace: NamespaceArg = None,
) -> CallToolResult:
    """Older name of memory_search (hybrid mode) with quality_boost=quality_weight."""
    return await _search(
        ctx,
        namespace,
        query=query,
        mode="hybrid",
        quality_boost=quality_weight,
        limit=n_results,
    )


async def exact_match_retrieve(
    ctx: Context,
    content: Annotated[
        str, Field(description="Text to match literally.", min_length=1, max_length=QUERY_MAX)
    ],
    n_results: NResults = 10,
    namespace: NamespaceArg = None,
) -> CallToolResult:
    """Older name of memory_search in exact mode (substring / phrase match)."""
    return await _search(ctx, namespace, query=content, mode="exact", limit=n_results)


async def debug_retrieve(
    ctx: Context, query: Query, n_results: NResults = 5, namespace: NamespaceArg = None
) -> CallToolResult:
    """Older name of memory_search with include_debug=True (ranking explained)."""
    return await _search(ctx, namespace, query=query, limit=n_results, include_debug=True)


LEGACY_TOOLS = [
    retrieve_memory,
    recall_memory,
    recall_by_timeframe,
    retrieve_with_quality_boost,
    exact_match_retrieve,
    debug_retrieve,
]
