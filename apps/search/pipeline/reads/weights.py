"""The per-namespace strategy multipliers learned from feedback."""

from __future__ import annotations

from apps.search.models import StrategyWeights

# Raw SQL reads go where the router sends reads (the replica, when one is configured).
from memoryhub.db_router import read_connection as connection


def learned_weights(namespace_id: int) -> dict[str, float]:
    """Per-strategy multipliers learned from feedback (StrategyWeights rows)."""
    # Plain SQL: one row per strategy, read on every search (the ORM cost more than the query).
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT strategy, weight FROM {StrategyWeights._meta.db_table} "
            "WHERE namespace_id = %s ORDER BY strategy",
            [namespace_id],
        )
        return {strategy: float(weight) for strategy, weight in cursor.fetchall()}
