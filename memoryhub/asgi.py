"""The one ASGI application: Django (UI, admin, REST) and, at /mcp, the MCP endpoint.

Serve it with `uvicorn memoryhub.asgi:application`. The lifespan events go to the MCP app,
whose session manager must run while the server is up; Django needs none.
"""

from __future__ import annotations

import os

from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings.base")
# A worker of `uvicorn --workers N` tells its siblings it is starting before the slow imports,
# so none of them reports ready while another is still cold (apps/core/readiness.py).
from django.conf import settings  # noqa: E402

settings.VAR_DIR  # noqa: B018  loads the settings
from apps.core import readiness  # noqa: E402

readiness.register()
# Sets Django up before the MCP app imports models. Static files (admin, API docs) are served
# by Django's own static handler, so one uvicorn process needs nothing in front of it.
from memoryhub.handler import get_application  # noqa: E402

django_application = ASGIStaticFilesHandler(get_application())

from apps.core.observability import RequestContext  # noqa: E402
from apps.mcp.server import BearerTokenGate, http_app  # noqa: E402
from memoryhub.admission import AdmissionGate  # noqa: E402
from memoryhub.limits import RequestBodyLimit  # noqa: E402
from memoryhub.prefix import PathPrefix, django_scope  # noqa: E402
from memoryhub.replica.request_scope import RoutingScope  # noqa: E402
from memoryhub.replica.routing import replica_configured  # noqa: E402
from memoryhub.warmup import warm  # noqa: E402

# /healthz says "starting" (503) until this process has loaded and exercised the model.
readiness.start(warm)

# Without a broker, one of the server's processes runs the periodic jobs (apps/jobs/scheduler.py).
from apps.jobs import scheduler  # noqa: E402
from memoryhub.schedule import server_schedule  # noqa: E402

scheduler.start(server_schedule())

MCP_PATH = "/mcp"
mcp_application = BearerTokenGate(http_app())


async def _route_by_path(scope, receive, send):
    if scope["type"] == "lifespan" or _is_mcp(scope):
        await mcp_application(scope, receive, send)
    else:
        await django_application(django_scope(scope), receive, send)


# Every HTTP request (Django and MCP) gets one request id, a JSON access log line and a latency.
application = RequestContext(_route_by_path, mcp_path=MCP_PATH)


def _is_mcp(scope) -> bool:
    path = scope.get("path", "")
    return scope["type"] == "http" and (path == MCP_PATH or path.startswith(MCP_PATH + "/"))


# A few requests of this process work at once, the rest wait in line, searches first
# (memoryhub/admission.py). Inside the body limit, which hands it the whole body.
if settings.WEB_MAX_INFLIGHT:
    application = AdmissionGate(  # noqa: F811
        application, limit=settings.WEB_MAX_INFLIGHT, write_every=settings.WEB_WRITE_EVERY
    )

# With a read replica, HTTP requests (Django and MCP) may read from it (memoryhub/replica/).
if replica_configured():
    application = RoutingScope(application)  # noqa: F811

# Outermost: the body limit on the bytes actually received, for Django and MCP alike.
# Import uploads may be as large as the import allows; they stream through to Django's disk
# spooling. A body that stops arriving is answered 408 (REQUEST_BODY_TIMEOUT_S).
application = RequestBodyLimit(  # noqa: F811
    application,
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE,
    upload_paths=r"^/ns/[^/]+/transfer/import/$",
    upload_max_bytes=lambda: settings.IMPORT_MAX_BYTES + 64 * 1024,  # + the form's other fields
    read_timeout=lambda: settings.REQUEST_BODY_TIMEOUT_S,
)

# The client address (rate limits, login lockouts, logs) comes from X-Forwarded-For only when the
# connection is from a configured proxy; anyone else's header is ignored. uvicorn runs with
# --no-proxy-headers, so this is the only place that reads it (uvicorn's own middleware).
if settings.TRUSTED_PROXIES:
    application = ProxyHeadersMiddleware(application, trusted_hosts=settings.TRUSTED_PROXIES)

# Outermost: under a path prefix (MEMORYHUB_PUBLIC_URL's path) every layer above sees the path
# without it, whether the proxy passed the prefix on or not (memoryhub/prefix.py).
if settings.PATH_PREFIX:
    application = PathPrefix(application, settings.PATH_PREFIX)
