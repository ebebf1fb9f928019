"""Coalesce bursts of "data changed" signals into one queued job per (job, namespace).

The first signal sets a Redis key (SET NX with a TTL) and queues the task with a countdown;
signals arriving while the key exists do nothing. The task deletes the key *before* it reads any
data, so a change committed after that point queues a fresh run, and a change committed before
it is seen by this run: no change is ever left unprocessed. The TTL (countdown + grace) frees the
key if a queued task is lost. Without a Redis broker (or if Redis fails), every signal queues.
"""

from __future__ import annotations

import logging
from functools import lru_cache

import redis
from django.conf import settings

logger = logging.getLogger(__name__)

GRACE_SECONDS = 600


def delay_seconds() -> float:
    return float(settings.JOBS_DEBOUNCE_SECONDS)


@lru_cache(maxsize=4)
def _client(url: str):
    return redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)


def redis_client():
    url = settings.CELERY_BROKER_URL or ""
    if not url.startswith(("redis://", "rediss://", "unix://")):
        return None
    return _client(url)


def broker_reachable() -> bool:
    """False when the Redis broker does not answer a PING (refused at once, or within 2 s).
    Publishing to a broker that is down would block the request for Celery's connection
    retries (about 20 s); the caller keeps the job in the database instead."""
    client = redis_client()
    if client is None:
        return True
    try:
        return bool(client.ping())
    except Exception:
        return False


def pending_key(job: str, namespace_id: int | None) -> str:
    return f"memoryhub:jobs:pending:{job}:{namespace_id or 'all'}"


def claim(job: str, namespace_id: int | None, countdown: float) -> bool:
    """True if the caller should queue the job (no run is pending yet)."""
    client = redis_client()
    if client is None:
        return True
    try:
        return bool(
            client.set(
                pending_key(job, namespace_id), "1", nx=True, ex=int(countdown) + GRACE_SECONDS
            )
        )
    except Exception:  # Redis down: queueing twice is harmless, losing the run is not.
        logger.warning("debounce: Redis unavailable, queueing %s without coalescing", job)
        return True


def release(job: str, namespace_id: int | None) -> None:
    """Called by the task before it reads data: later changes queue a new run."""
    client = redis_client()
    if client is None:
        return
    try:
        client.delete(pending_key(job, namespace_id))
    except Exception:
        logger.warning("debounce: could not release %s/%s", job, namespace_id)
