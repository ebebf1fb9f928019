"""An MCP search carries the request's id into its QueryLog row, the same id the JSON access
log line of that /mcp request shows."""

from __future__ import annotations

import io
import json
import logging
import time

import pytest
from pythonjsonlogger.json import JsonFormatter

from apps.search.models import QueryLog

from .client import http_client, run

pytestmark = pytest.mark.django_db(transaction=True)


def test_mcp_search_querylog_has_the_request_id_of_its_log_line(
    asgi_server, tokens, embedding_model, settings
):
    settings.SEARCH_QUERYLOG_SYNC = True
    handler = next(
        h for h in logging.getLogger().handlers if isinstance(h.formatter, JsonFormatter)
    )
    buffer = io.StringIO()
    old = handler.setStream(buffer)

    async def scenario():
        async with http_client(asgi_server, tokens.alpha_rw) as client:
            await client.call_tool("memory_search", {"query": "deploy script"})

    try:
        run(scenario)
        row = QueryLog.objects.get()
        assert row.request_id
        deadline = time.monotonic() + 5  # the access line follows the response: wait for it
        while True:
            logged = [json.loads(x) for x in buffer.getvalue().splitlines() if x.startswith("{")]
            mcp_ids = {line["request_id"] for line in logged if line.get("path") == "/mcp"}
            if row.request_id in mcp_ids or time.monotonic() > deadline:
                break
            time.sleep(0.02)
    finally:
        handler.setStream(old)
    assert row.request_id in mcp_ids
