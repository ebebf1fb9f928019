"""Request ids and metrics through the real ASGI server: one id in the response header, the
JSON access-log line and the QueryLog row; /metrics off by default, protected when on, and
showing search latency after a search."""

from __future__ import annotations

import io
import json
import logging
import time

import pytest
from pythonjsonlogger.json import JsonFormatter

from apps.search import querylog
from apps.search.models import QueryLog

from .live import bearer

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def json_log():
    """The configured console handler (settings.LOGGING), writing into a buffer."""
    handler = next(
        h for h in logging.getLogger().handlers if isinstance(h.formatter, JsonFormatter)
    )
    buffer = io.StringIO()
    old = handler.setStream(buffer)
    yield buffer
    handler.setStream(old)


def _lines(buffer: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in buffer.getvalue().splitlines() if line.startswith("{")]


def _access_lines(buffer: io.StringIO, path: str) -> list[dict]:
    """The access line is written just after the response is sent: wait for it (up to 5 s)."""
    deadline = time.monotonic() + 5
    while True:
        found = [line for line in _lines(buffer) if line.get("path") == path]
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.02)


def test_a_rest_search_shares_one_request_id_across_header_log_and_querylog(api, tokens, json_log):
    response = api.post(
        "/search/",
        json={"query": "anything about deployments"},
        headers={**bearer(tokens.alpha_rw), "X-Request-ID": "req-abc.123"},
    )
    assert response.status_code == 200
    assert response.headers["X-Request-ID"] == "req-abc.123"
    querylog.flush()
    assert QueryLog.objects.get(pk=response.json()["query_log_id"]).request_id == "req-abc.123"
    access = _access_lines(json_log, "/api/v1/search/")
    assert access and access[-1]["request_id"] == "req-abc.123"
    assert access[-1]["status"] == 200 and access[-1]["route"] == "/api/v1/search/"


def test_without_an_incoming_id_one_is_made_and_unsafe_ids_are_replaced(api, tokens):
    made = api.get("/namespaces/", headers=bearer(tokens.alpha_rw)).headers["X-Request-ID"]
    assert len(made) == 32
    unsafe = api.get(
        "/namespaces/", headers={**bearer(tokens.alpha_rw), "X-Request-ID": "a b\tc"}
    ).headers["X-Request-ID"]
    assert unsafe != "a b\tc" and len(unsafe) == 32


def test_metrics_are_off_by_default(asgi_server, db):
    import httpx

    assert httpx.get(f"{asgi_server}/metrics").status_code == 404


def test_metrics_show_search_latency_and_refuse_without_the_token(
    asgi_server, api, tokens, settings
):
    import httpx

    settings.METRICS_ENABLED = True
    settings.METRICS_TOKEN = "s3cret-metrics"
    assert httpx.get(f"{asgi_server}/metrics").status_code == 401
    assert httpx.get(f"{asgi_server}/metrics", headers=bearer("wrong")).status_code == 401

    api.post("/search/", json={"query": "deployments"}, headers=bearer(tokens.alpha_rw))
    body = httpx.get(f"{asgi_server}/metrics", headers=bearer("s3cret-metrics")).text
    assert "memoryhub_search_duration_seconds_count" in body
    assert 'memoryhub_search_stage_duration_seconds_count{stage="embed"}' in body
    assert 'route="/api/v1/search/"' in body
    assert 'memoryhub_db_pool_connections{state="size"}' in body


def test_metrics_without_a_token_answer_only_allowed_addresses(asgi_server, settings, db):
    import httpx

    settings.METRICS_ENABLED = True
    settings.METRICS_TOKEN = ""
    settings.METRICS_ALLOWED_IPS = ["10.0.0.0/8"]
    assert httpx.get(f"{asgi_server}/metrics").status_code == 403
    settings.METRICS_ALLOWED_IPS = ["127.0.0.1"]
    assert httpx.get(f"{asgi_server}/metrics").status_code == 200
