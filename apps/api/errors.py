"""One error shape for the whole API: {"detail": "...", "errors": {"field.path": ["..."]}}.

Service errors (ValidationFailed, NotFound, PermissionDenied) and DRF's own errors both end up
here, so a client always finds the offending field under "errors".
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.db import InterfaceError, OperationalError
from rest_framework import status
from rest_framework.exceptions import APIException, NotAuthenticated, ValidationError
from rest_framework.response import Response
from rest_framework.views import exception_handler

from apps.core.exceptions import NotFound, PermissionDenied, ValidationFailed, VersionConflict
from apps.vectors.embeddings import EmbeddingTimeout
from memoryhub.pg_backend.base import ServerMarkedDown

logger = logging.getLogger(__name__)


class RequestTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "Request body too large."
    default_code = "request_too_large"


def flatten_errors(detail: Any, prefix: str = "") -> dict[str, list[str]]:
    """DRF's nested error structure as {"items[3].content": ["..."]}."""
    if isinstance(detail, dict):
        out: dict[str, list[str]] = {}
        for key, value in detail.items():
            if isinstance(key, int):  # a ListSerializer's errors, keyed by item index
                path = f"{prefix}[{key}]"
            else:
                name = "" if key == "non_field_errors" else str(key)
                path = f"{prefix}.{name}" if prefix and name else (prefix or name)
            out.update(flatten_errors(value, path))
        return out
    if isinstance(detail, list):
        if all(not isinstance(v, dict | list) for v in detail):
            return {prefix or "non_field_errors": [str(v) for v in detail]}
        out = {}
        for index, value in enumerate(detail):
            if value:
                out.update(flatten_errors(value, f"{prefix}[{index}]"))
        return out
    return {prefix or "non_field_errors": [str(detail)]}


def _summary(errors: dict[str, list[str]]) -> str:
    return "; ".join(f"{field}: {' '.join(msgs)}" for field, msgs in errors.items())


def api_exception_handler(exc: Exception, context: dict) -> Response | None:
    if isinstance(exc, OperationalError | InterfaceError):
        # The database went away mid-request; the next connection brings it back. The first
        # failures carry their traceback (which statement met the outage is what an operator
        # needs); requests refused because the server is already known down log one line.
        known_down = isinstance(exc.__cause__, ServerMarkedDown)
        logger.warning("database unavailable: %s", exc, exc_info=None if known_down else exc)
        return Response(
            {"detail": "The database is briefly unavailable; retry in a few seconds."},
            status=503,
            headers={"Retry-After": "5"},
        )
    if isinstance(exc, EmbeddingTimeout):  # the encoder is swamped: nothing was written
        logger.warning("embedding timed out: %s", exc)
        return Response(
            {"detail": "The embedding model is busy; retry in a few seconds."},
            status=503,
            headers={"Retry-After": "5"},
        )
    if isinstance(exc, RecursionError):  # JSON nested beyond what the parser can follow
        return Response({"detail": "JSON parse error: the body is nested too deeply."}, 400)
    if isinstance(exc, ValidationFailed):
        return Response({"detail": exc.summary(), "errors": exc.errors}, status=400)
    if isinstance(exc, NotFound):
        return Response({"detail": str(exc)}, status=404)
    if isinstance(exc, VersionConflict):
        version = getattr(exc.current, "version", None)
        headers = {"ETag": f'"{version}"'} if version is not None else None
        return Response({"detail": str(exc), "version": version}, status=412, headers=headers)
    if isinstance(exc, PermissionDenied):
        return Response({"detail": str(exc)}, status=403)
    if isinstance(exc, RequestDataTooBig):
        exc = RequestTooLarge()
    response = exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, NotAuthenticated):
        response.data = {
            "detail": "An API token is required: send 'Authorization: Bearer <token>'."
        }
    elif isinstance(exc, ValidationError):
        errors = flatten_errors(exc.detail)
        response.data = {"detail": _summary(errors), "errors": errors}
    elif isinstance(response.data, dict) and "detail" in response.data:
        response.data = {"detail": str(response.data["detail"])}
    return response
