"""A request whose read failed on one server, before it wrote anything, runs again on the other
(the Django middleware here; the MCP runtime calls `retry_read` itself)."""

from __future__ import annotations

import logging

from django.core.exceptions import RequestDataTooBig

from .routing import replica_configured
from .state import PRIMARY, REPLICA, current

logger = logging.getLogger(__name__)


def retry_read() -> bool:
    """After a failed read on one server: True if the request may simply run again on the
    other (it has written nothing: a write sends every later read of it to the primary)."""
    state = current()
    if state is None or state.failed_alias is None or state.wrote:
        return False
    if {PRIMARY, REPLICA} <= state.avoid:
        return False  # both failed: nothing left to try
    logger.warning("a read failed on %r; the request runs again", state.failed_alias)
    state.failed_alias = None
    return True


class ReplicaRetryMiddleware:
    """Django middleware: a request whose read failed on one server (before it wrote anything)
    runs once more on the other, so a server that stops under load costs no reader an error.
    Requests with a body other than JSON (uploads) are not buffered and not retried."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if current() is None or not replica_configured():
            return self.get_response(request)
        if request.method not in ("GET", "HEAD", "OPTIONS"):
            if request.content_type != "application/json":
                return self.get_response(request)
            try:
                request.body  # noqa: B018 - buffered, so a retry can parse it again
            except RequestDataTooBig:
                return self.get_response(request)  # the view answers 413
        response = self.get_response(request)
        if response.status_code >= 500 and retry_read():
            # The body was read into request.body above, so the view can parse it again.
            logger.warning("a read failed on one database server; answering from the other")
            response = self.get_response(request)
        return response
