"""Stability (0..1, 1 = fresh) from time since last access, scaled per tier (SPEC section 6).

    stability = 0.5 ** (tier_scale * days_idle / (half_life_days * (1 + ln(1 + access_count))))

`days_idle` counts from `last_accessed_at`, or from `created_at` for a memory never accessed;
the job first folds new search-log accesses into those columns (access.py).
Tier scales: constitutional 0.1, core 0.5, normal 1.0, scratch 3.0, so a scratch note loses half
its stability three times as fast as a normal one and a constitutional rule ten times slower.
Each access stretches the half-life (a memory used often is remembered longer). The value is
rounded to 6 decimals, which makes a re-run with the same clock a no-op.

A stored value is rewritten only when it moved by STABILITY_STEP or crossed the stale
threshold: at 6 decimals every memory moved every hour, and the hourly run rewrote the whole
namespace. Each rewritten row is a new row version that PostgreSQL adds to every index of the
table, the HNSW graph included (~2 ms a row at 100k memories), and until VACUUM the graph holds
the old copies of the same vector beside the new.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from apps.memories.models import Memory, Namespace, Tier

from .access import accesses_record

# The largest drift a stored stability may carry: search multiplies a score by
# 1 - 0.2 * (1 - stability) (apps/search/pipeline/boost.py), so a score moves by 0.1% at most.
# A normal-tier memory at half stability drifts this far in about ten hours.
STABILITY_STEP = 0.005

TIER_DECAY_SCALE: dict[str, float] = {
    Tier.CONSTITUTIONAL: 0.1,
    Tier.CORE: 0.5,
    Tier.NORMAL: 1.0,
    Tier.SCRATCH: 3.0,
}


def half_life_days() -> float:
    return float(settings.JOBS_DECAY_HALF_LIFE_DAYS)


def stability_value(
    *, tier: str, days_idle: float, access_count: int = 0, half_life: float | None = None
) -> float:
    """The formula above in Python (the job runs the same formula in SQL)."""
    half_life = half_life or half_life_days()
    scale = TIER_DECAY_SCALE.get(tier, 1.0)
    exponent = scale * max(days_idle, 0.0) / (half_life * (1.0 + math.log1p(access_count)))
    return round(float(0.5**exponent), 6)


def decay_update(
    *, namespace: Namespace, now: datetime | None = None, recent: bool = False, **_options: object
) -> dict[str, Any]:
    """Set-based: one UPDATE over the namespace; only rows whose value moved by STABILITY_STEP
    (or across the stale threshold) change.

    `recent`: fold the new accesses and recompute only the memories they touched (the
    in-server scheduler does this every minute, so usage counts follow searches closely; the
    whole namespace, whose values all drift a little each minute, is left to the hourly run).
    """
    now = now or timezone.now()
    touched = accesses_record(namespace=namespace, now=now)
    accessed = len(touched)
    only = "AND id = ANY(%(ids)s)" if recent else ""
    cases = " ".join(f"WHEN '{tier}' THEN {scale}" for tier, scale in TIER_DECAY_SCALE.items())
    table = Memory._meta.db_table
    sql = f"""
        WITH fresh AS (
            SELECT id, round(power(0.5::float8,
                (CASE tier {cases} ELSE 1.0 END)
                * greatest(extract(epoch FROM (%(now)s - coalesce(last_accessed_at, created_at)))
                           / 86400.0, 0)
                / (%(half_life)s * (1 + ln(1 + access_count)))
            )::numeric, 6)::float8 AS value
            FROM {table} WHERE namespace_id = %(ns)s {only}
        )
        UPDATE {table} AS m SET stability = fresh.value FROM fresh
        WHERE m.id = fresh.id
          AND (abs(m.stability - fresh.value) >= %(step)s
               OR (m.stability < %(stale)s) <> (fresh.value < %(stale)s))
    """
    with transaction.atomic(), connection.cursor() as cursor:
        params: dict[str, Any] = {
            "now": now,
            "half_life": half_life_days(),
            "ns": namespace.pk,
            "ids": touched,
            "step": STABILITY_STEP,
            "stale": settings.STALE_STABILITY_THRESHOLD,
        }
        cursor.execute(sql, params)
        updated = cursor.rowcount
        cursor.execute(
            f"SELECT count(*), coalesce(avg(stability), 0) FROM {table} WHERE namespace_id = %s",
            [namespace.pk],
        )
        total, mean = cursor.fetchone()
    return {
        "memories": total,
        "memories_updated": updated,
        "memories_accessed": accessed,
        "mean_stability": round(mean, 4),
    }
