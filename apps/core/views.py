"""Operational endpoints."""

from __future__ import annotations

from django.http import JsonResponse
from django.views.decorators.http import require_GET

from .health import run_checks


@require_GET
def healthz(request):
    checks = run_checks()
    healthy = all(check["ok"] for check in checks.values())
    return JsonResponse(
        {"status": "ok" if healthy else "degraded", **checks}, status=200 if healthy else 503
    )
