"""Streamed responses under ASGI: Django serves a StreamingHttpResponse asynchronously only from
an asynchronous iterator; given a synchronous one it first reads it whole into memory (with the
warning "StreamingHttpResponse must consume synchronous iterators"). `in_thread` hands over a
synchronous iterator (one that reads the database in batches, say) piece by piece instead: each
`next()` runs in the request's own sync thread, so memory holds one piece at a time."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

from asgiref.sync import sync_to_async

_END = object()


async def in_thread(iterator: Iterator[bytes]) -> AsyncIterator[bytes]:
    pieces = iter(iterator)
    step = sync_to_async(next, thread_sensitive=True)
    try:
        while (piece := await step(pieces, _END)) is not _END:
            yield piece
    finally:  # the client hung up or the last piece went: let the generator close its cursor
        close = getattr(pieces, "close", None)
        if close is not None:
            await sync_to_async(close, thread_sensitive=True)()
