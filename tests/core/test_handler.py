"""The ASGI handler runs a Django request's middleware and view in one thread, entered once."""

from __future__ import annotations

import asyncio
import threading

from django.http import HttpResponse
from django.test import override_settings
from django.urls import path

from memoryhub.handler import OneHopASGIHandler

seen: dict[str, int] = {}


class RecordThread:
    """A plain sync middleware that notes the thread it ran in."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        seen["middleware"] = threading.get_ident()
        return self.get_response(request)


def view(request):
    seen["view"] = threading.get_ident()
    return HttpResponse("ok")


urlpatterns = [path("probe/", view)]


def _get(app, path_: str) -> tuple[int, bytes]:
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path_,
        "raw_path": path_.encode(),
        "query_string": b"",
        "headers": [(b"host", b"testserver")],
        "client": ("127.0.0.1", 1),
        "server": ("testserver", 80),
    }
    sent: list[dict] = []

    messages = [{"type": "http.request", "body": b"", "more_body": False}]

    async def receive():
        if messages:
            return messages.pop()
        await asyncio.Event().wait()  # the client stays connected until the handler is done

    async def send(message):
        sent.append(message)

    async def serve():
        seen["loop"] = threading.get_ident()
        await app(scope, receive, send)

    asyncio.run(serve())
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return status, body


@override_settings(
    ROOT_URLCONF=__name__,
    MIDDLEWARE=[
        f"{__name__}.RecordThread",
        "django.middleware.security.SecurityMiddleware",
        "django.middleware.common.CommonMiddleware",
    ],
    ALLOWED_HOSTS=["testserver"],
)
def test_middleware_and_view_share_one_thread_off_the_event_loop():
    seen.clear()
    app = OneHopASGIHandler()
    # The chain is plain synchronous code: no sync/async adapter between the middleware.
    assert not asyncio.iscoroutinefunction(app._middleware_chain)
    status, body = _get(app, "/probe/")
    assert (status, body) == (200, b"ok")
    assert seen["middleware"] == seen["view"]
    assert seen["view"] != seen["loop"]  # not on the event loop
