"""Operational endpoints."""

from __future__ import annotations

from django.http import JsonResponse
from django.views.decorators.http import require_GET

from . import readiness
from .health import run_checks
from .observability import mark_answered_starting


def _public(state: dict) -> dict:
    """What an anonymous caller may see: the state, not the raw error (socket paths, hosts)."""
    return {k: ("unavailable" if k == "error" else v) for k, v in state.items()}


@require_GET
def healthz(request):
    if not readiness.is_ready():  # the model and parsers are still warming up
        mark_answered_starting(request)
        return JsonResponse({"status": "starting"}, status=503)
    checks = run_checks()
    healthy = all(check["ok"] for check in checks.values())
    if not request.user.is_staff:
        checks = {name: _public(state) for name, state in checks.items()}
    return JsonResponse(
        {"status": "ok" if healthy else "degraded", **checks}, status=200 if healthy else 503
    )
