"""Talk to the live server with the official MCP client, from synchronous tests."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

T = TypeVar("T")


@asynccontextmanager
async def http_client(base_url: str, raw_token: str | None):
    headers = {"Authorization": f"Bearer {raw_token}"} if raw_token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(f"{base_url}/mcp", http_client=http)) as client,
    ):
        yield client


def run(scenario: Callable[[], Awaitable[T]]) -> T:
    return anyio.run(scenario)


def text_of(result) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def structured(result) -> dict[str, Any]:
    return result.structured_content or {}
