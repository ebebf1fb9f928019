"""The temporal neighbours of candidates (for the context and co-activation stages): the
memories written just before and after each, and the rest of an imported session."""

from __future__ import annotations

from typing import Any

from apps.vectors.nearest import walk_rows

# Raw SQL reads go where the router sends reads (the replica, when one is configured).
from memoryhub.replica.routing import read_connection as connection

from ..scope import MEMORY, Scope

MAX_TIED_ROWS = 5000


def window_rows(
    scope: Scope, times: list[Any], gap_seconds: float, *, by_id: bool = False
) -> list[tuple[Any, ...]]:
    """(id, created_at, external_id) of the memories in scope that can be temporal neighbours
    of memories created at `times`: every imported memory sharing one of those timestamps (a
    session imported with one date; its external ids give the order), plus the nearest
    earlier and later memory within `gap` of each. Memories written together in one batch
    share a timestamp without any order among them, so they are not each other's neighbours.
    Bounded work at any namespace size: one index range scan per timestamp. With by_id,
    `times` are memory ids, whose timestamps the same statement reads: no row of theirs need
    be fetched first, so the search reads this beside their rows."""
    sql, args = window_query(scope, times, gap_seconds, by_id=by_id)
    if not sql:
        return []
    with connection.cursor() as cursor:
        # One execute, one round trip: a string of statements runs as one transaction, so the
        # setting holds for the probes and ends with them (nearest.walk_settings does the same).
        cursor.execute(PROBE_SETTINGS + sql, args)
        return [(i, c, e) for i, c, e in walk_rows(cursor)]


# Each neighbour probe walks the (namespace, created_at) index, which returns its one row
# already in order. When the statistics have not seen a namespace yet (bulk-imported since the
# last ANALYZE: 10k memories added to a 100k table stay under autovacuum's 10%), the planner
# expects a single row there, takes the bare namespace index and sorts the whole namespace once
# per probe: 1.4-2 s a search instead of ~6 ms (docs/benchmarks.md, "Scale"). With sorts ruled
# out, only the right index is left. Sent in front of the probes' statement.
PROBE_SETTINGS = "SET LOCAL enable_sort = off; "


def window_query(
    scope: Scope, times: list[Any], gap_seconds: float, *, by_id: bool = False
) -> tuple[str, list[Any]]:
    """The statement of window_rows; with by_id, `times` are memory ids and the timestamps
    are theirs."""
    stamps = sorted(set(times))
    if not stamps:
        return "", []
    where, params = scope.where(probe_tags=True)
    # The given timestamps, read once for the three parts below (with by_id, from the ids'
    # rows; materialized, so those rows are not looked up three times).
    if by_id:
        given = f"SELECT DISTINCT created_at FROM {MEMORY} WHERE id = ANY(%s::uuid[])"
    else:
        given = "SELECT unnest(%s::timestamptz[])"
    lateral = (
        "SELECT x.id, x.created_at, x.external_id FROM t "
        "CROSS JOIN LATERAL (SELECT m.id::text, m.created_at, m.external_id "
        f"FROM {MEMORY} m WHERE {where} AND m.created_at {{op}} t.ts "
        "AND m.created_at {bound} ORDER BY m.created_at {order} LIMIT 1) x"
    )
    before = lateral.format(op="<", bound=">= t.ts - make_interval(secs => %s)", order="DESC")
    after = lateral.format(op=">", bound="<= t.ts + make_interval(secs => %s)", order="ASC")
    sql = (
        f"WITH t(ts) AS MATERIALIZED ({given}) "
        f"(SELECT m.id::text, m.created_at, m.external_id FROM {MEMORY} m WHERE {where} "
        "AND m.created_at IN (SELECT ts FROM t) AND m.external_id IS NOT NULL "
        f"LIMIT {MAX_TIED_ROWS}) "
        f"UNION ({before}) UNION ({after})"
    )
    args = [stamps] + params
    args += params + [gap_seconds]
    args += params + [gap_seconds]
    return sql, args
