"""Prometheus metrics (prometheus_client) and the protected /metrics view.

Several uvicorn workers: each process keeps its own counters. When PROMETHEUS_MULTIPROC_DIR is
set (an empty directory, cleared before the server starts), prometheus_client's multiprocess
mode writes them to files there and /metrics sums every process; without it, /metrics shows
only the process that answered the scrape.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
from dataclasses import dataclass

from django.conf import settings
from django.db import connections
from django.http import HttpRequest, HttpResponse
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

HTTP_LATENCY = Histogram(
    "memoryhub_http_request_duration_seconds",
    "Time to answer an HTTP request, by route pattern",
    ["method", "route", "status"],
    buckets=LATENCY_BUCKETS,
)
SEARCH_LATENCY = Histogram(
    "memoryhub_search_duration_seconds", "Whole search() time", buckets=LATENCY_BUCKETS
)
SEARCH_STAGE = Histogram(
    "memoryhub_search_stage_duration_seconds",
    "Time spent in each search stage (the search's own timings)",
    ["stage"],
    buckets=LATENCY_BUCKETS,
)
# livesum: summed over the live worker processes in multiprocess mode.
DB_POOL = Gauge(
    "memoryhub_db_pool_connections",
    "Database pool connections of this server (size, idle, waiting requests), as of each "
    "process's last search or scrape",
    ["state"],
    multiprocess_mode="livesum",
)
JOB_RUNS = Counter(
    "memoryhub_job_runs_total", "Job runs finished, by job and status", ["job", "status"]
)


@dataclass(frozen=True)
class MetricsSettings:
    enabled: bool
    token: str
    allowed_ips: tuple[str, ...]


def metrics_settings() -> MetricsSettings:
    return MetricsSettings(
        enabled=settings.METRICS_ENABLED,
        token=settings.METRICS_TOKEN,
        allowed_ips=tuple(settings.METRICS_ALLOWED_IPS),
    )


def observe_request(method: str, route: str, status: int, seconds: float) -> None:
    HTTP_LATENCY.labels(method=method, route=route, status=str(status)).observe(seconds)


def observe_search(timings_ms: dict[str, float], latency_ms: float) -> None:
    SEARCH_LATENCY.observe(latency_ms / 1000)
    for stage, ms in timings_ms.items():
        SEARCH_STAGE.labels(stage=stage).observe(ms / 1000)
    observe_pool()


def observe_pool() -> None:
    """Read the Django connection pool's counters (psycopg_pool); nothing when pooling is off."""
    pool = connections["default"].pool
    if pool is None:
        return
    stats = pool.get_stats()
    DB_POOL.labels(state="size").set(stats.get("pool_size", 0))
    DB_POOL.labels(state="idle").set(stats.get("pool_available", 0))
    DB_POOL.labels(state="waiting").set(stats.get("requests_waiting", 0))


def observe_job(job: str, status: str) -> None:
    JOB_RUNS.labels(job=job, status=status).inc()


def _allowed(request: HttpRequest, cfg: MetricsSettings) -> bool:
    """With a token, the bearer token decides; without one, the client address must be in
    METRICS_ALLOWED_IPS (addresses or networks)."""
    if cfg.token:
        auth = request.headers.get("Authorization", "")
        scheme, _, given = auth.partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(given.strip(), cfg.token)
    try:
        client = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
    except ValueError:
        return False
    return any(client in ipaddress.ip_network(net, strict=False) for net in cfg.allowed_ips)


def _registry():
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return registry
    return REGISTRY


def metrics_view(request: HttpRequest) -> HttpResponse:
    cfg = metrics_settings()
    if not cfg.enabled:
        return HttpResponse(
            "metrics are off (METRICS_ENABLED)\n", status=404, content_type="text/plain"
        )
    if not _allowed(request, cfg):
        if not cfg.token:
            return HttpResponse(
                "metrics: this address is not in METRICS_ALLOWED_IPS\n",
                status=403,
                content_type="text/plain",
            )
        response = HttpResponse(
            "metrics need a valid bearer token\n", status=401, content_type="text/plain"
        )
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    observe_pool()
    return HttpResponse(generate_latest(_registry()), content_type=CONTENT_TYPE_LATEST)
