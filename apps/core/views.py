"""Operational endpoints."""

from __future__ import annotations

from django.http import JsonResponse
from django.views.decorators.http import require_GET

from . import readiness
from .health import run_checks


@require_GET
def healthz(request):
    if not readiness.is_ready():  # the model and parsers are still warming up
        return JsonResponse({"status": "starting"}, status=503)
    checks = run_checks()
    healthy = all(check["ok"] for check in checks.values())
    return JsonResponse(
        {"status": "ok" if healthy else "degraded", **checks}, status=200 if healthy else 503
    )
