"""The per-namespace strategy multipliers learned from feedback."""

from __future__ import annotations

from threading import Lock

from cachetools import TTLCache

from apps.search.models import StrategyWeights

# Raw SQL reads go where the router sends reads (the replica, when one is configured).
from memoryhub.replica.routing import read_connection as connection

# Kept a little while per namespace: the feedback job rewrites them now and then, and every
# search read them. A write in this process forgets them at once (forget_learned_weights);
# another process's cache catches up within the TTL.
LEARNED_TTL_S = 30
_learned: TTLCache[int, dict[str, float]] = TTLCache(maxsize=10_000, ttl=LEARNED_TTL_S)
_learned_lock = Lock()


def learned_weights(namespace_id: int) -> dict[str, float]:
    """Per-strategy multipliers learned from feedback (StrategyWeights rows)."""
    with _learned_lock:
        found = _learned.get(namespace_id)
    if found is not None:
        return dict(found)
    # Plain SQL: one row per strategy (the ORM cost more than the query).
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT strategy, weight FROM {StrategyWeights._meta.db_table} "
            "WHERE namespace_id = %s ORDER BY strategy",
            [namespace_id],
        )
        found = {strategy: float(weight) for strategy, weight in cursor.fetchall()}
    with _learned_lock:
        _learned[namespace_id] = found
    return dict(found)


def forget_learned_weights(namespace_id: int) -> None:
    """The namespace's weights changed: the next search reads them again."""
    with _learned_lock:
        _learned.pop(namespace_id, None)
