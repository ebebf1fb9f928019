"""Operational endpoints."""

from __future__ import annotations

from django.db import connection
from django.http import JsonResponse
from django.views.decorators.http import require_GET

from apps.memories.embeddings import model_info

from . import readiness


def _database_state() -> dict:
    try:
        with connection.cursor() as cur:
            cur.execute("SELECT current_setting('server_version')")
            server_version = cur.fetchone()[0]
            cur.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
            row = cur.fetchone()
        return {
            "ok": row is not None,
            "postgres": server_version,
            "pgvector": row[0] if row else None,
            "vendor": connection.vendor,
        }
    except Exception as exc:  # report, never raise: this is the health endpoint
        return {"ok": False, "error": str(exc)}


def _model_state() -> dict:
    try:
        return {"ok": True, **model_info()}
    except Exception as exc:
        return {"ok": False, "error": str(exc)}


@require_GET
def healthz(request):
    if not readiness.is_ready():  # the model and parsers are still warming up
        return JsonResponse({"status": "starting"}, status=503)
    database = _database_state()
    model = _model_state()
    healthy = database["ok"] and model["ok"]
    return JsonResponse(
        {"status": "ok" if healthy else "degraded", "database": database, "embedding_model": model},
        status=200 if healthy else 503,
    )
