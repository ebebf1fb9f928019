"""Health checks that /healthz reports. The bottom room owns the endpoint and the database
check; domain apps register their own checks when ready (memories: the embedding model), so core
imports none of them."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from django.db import connection

# A check returns details to show; it raises when the part is unhealthy.
HealthCheck = Callable[[], Mapping[str, object]]

_checks: dict[str, HealthCheck] = {}


def register_health_check(name: str, check: HealthCheck) -> None:
    _checks[name] = check


def database_state() -> dict:
    with connection.cursor() as cur:
        cur.execute("SELECT current_setting('server_version')")
        server_version = cur.fetchone()[0]
        cur.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        row = cur.fetchone()
    if row is None:
        raise RuntimeError("the pgvector extension is not installed")
    return {"postgres": server_version, "pgvector": row[0], "vendor": connection.vendor}


def run_checks() -> dict[str, dict]:
    """{name: {"ok": bool, ...details or "error"}}, the database first. Never raises."""
    results = {}
    for name, check in {"database": database_state, **_checks}.items():
        try:
            results[name] = {"ok": True, **check()}
        except Exception as exc:  # report, never raise: this feeds the health endpoint
            results[name] = {"ok": False, "error": str(exc)}
    return results
