"""uvicorn's HTTP protocols with a deadline for a request's headers.

uvicorn closes a keep-alive connection that stays idle, but any byte resets that timer and a
new connection has none: a client sending a request line and then a header byte every few
seconds held its connection (and the file descriptor) forever. Here every request's headers
must be complete within REQUEST_HEADER_TIMEOUT_S of the connection opening (or of the previous
response); otherwise the connection is closed. The body has its own deadline in the app
(memoryhub/limits.py answers 408).

Served with `uvicorn --http memoryhub.http:HeaderDeadlineHttpTools` (the C parser uvicorn picks
by itself when httptools is installed, as it is here); `HeaderDeadlineH11` is the same on the
pure-Python parser. Both protocols start a request's cycle when its headers are complete, which
is what the deadline watches.
"""

from __future__ import annotations

import asyncio

from django.conf import settings
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


class _HeaderDeadline:
    _deadline: asyncio.TimerHandle | None = None
    _cycle_waited_after: object = None

    def connection_made(self, transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._await_headers()

    def on_response_complete(self) -> None:
        self._await_headers()  # before: a pipelined request may start a new cycle at once
        super().on_response_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_deadline()
        super().connection_lost(exc)

    def _await_headers(self) -> None:
        self._cancel_deadline()
        self._cycle_waited_after = self.cycle
        self._deadline = self.loop.call_later(settings.REQUEST_HEADER_TIMEOUT_S, self._headers_due)

    def _cancel_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _headers_due(self) -> None:
        self._deadline = None
        if self.cycle is not self._cycle_waited_after:
            return  # a request's headers came in time: it has its own cycle
        if not self.transport.is_closing():
            self.transport.close()


class HeaderDeadlineHttpTools(_HeaderDeadline, HttpToolsProtocol):
    pass


class HeaderDeadlineH11(_HeaderDeadline, H11Protocol):
    pass
