"""Django's ASGI handler with the middleware chain and the view run in one thread hop.

Under ASGI, Django builds its middleware chain in async mode. Every middleware written as a
plain `MiddlewareMixin` then runs its `process_request` and `process_response` through
`sync_to_async`, each a round trip between the event loop and the request's worker thread, and
a sync-only middleware (ours: the replica retry) adds an `async_to_sync` back. A search made
about twenty such trips; under load each one waits for a busy event loop, and they cost CPU.
This handler loads the chain in sync mode and calls it once, in the request's own thread
(thread-sensitive, as Django runs sync views), so a request crosses from the loop to its
thread once. Nothing in the stack is async-only (no async views), so behaviour is unchanged.
"""

from __future__ import annotations

import django
from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIHandler


class OneHopASGIHandler(ASGIHandler):
    def load_middleware(self, is_async=False):
        super().load_middleware(is_async=False)

    async def get_response_async(self, request):
        return await sync_to_async(self.get_response, thread_sensitive=True)(request)


def get_application() -> OneHopASGIHandler:
    django.setup(set_prefix=False)
    return OneHopASGIHandler()
