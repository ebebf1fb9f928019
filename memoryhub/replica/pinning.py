"""Read-your-writes: the first write of a request pins its client to the primary for
REPLICA_PIN_SECONDS, in the `routing` cache that all web processes share."""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.cache import caches

from .state import RequestRouting

logger = logging.getLogger(__name__)

# Models whose writes are bookkeeping, not data a client reads back: they never pin.
# The missed-query vector is written by a search that found nothing good: pinned, such a reader
# read the primary for the next REPLICA_PIN_SECONDS and its searches failed when it stopped.
UNPINNED_MODELS = {
    "search.querylog",
    "search.missedqueryvector",
    "access.apitoken",
    "axes.accessattempt",
    "axes.accesslog",
}


def _pin_key(client: str) -> str:
    return f"memoryhub:pin:{client}"


def _routing_cache():
    return caches["routing"]


def is_pinned(state: RequestRouting) -> bool:
    if state.pinned is None:
        if not state.client:
            state.pinned = False
        else:
            try:
                state.pinned = bool(_routing_cache().get(_pin_key(state.client)))
            except Exception:  # the shared cache is down: we cannot know, so read the primary
                logger.warning("routing cache unavailable; reading from the primary")
                state.pinned = True
    return state.pinned


def pin(state: RequestRouting) -> None:
    state.wrote = True
    state.pinned = True
    if state.client:
        pin_client(state.client)


def pin_client(client: str) -> None:
    try:
        _routing_cache().set(_pin_key(client), 1, timeout=settings.REPLICA_PIN_SECONDS)
    except Exception:
        logger.warning("routing cache unavailable; read-your-writes pin not shared")
