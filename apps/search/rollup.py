"""The analytics page's daily roll-up of the search log (models SearchDay*).

A closed day (before yesterday, UTC) is aggregated once, by the first page that needs it, into
four narrow tables: per day, per day and strategy, per day and returned memory, per day and
query text. The page then reads those rows for the closed days and aggregates only the last
two days (still being written: the log is flushed in batches) from the raw log, through the
same SQL, so both halves agree to the row. Feedback on an old search drops its day's rows
(`forget_day`), and the next page view rolls that day up again.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from django.db import connection, transaction
from django.utils import timezone

from .models import SearchDay, SearchDayMemory, SearchDayQuery, SearchDayStrategy

# Days this recent are read from the raw log: searches still arrive for them.
LIVE_DAYS = 2

_LOG = "FROM search_querylog q WHERE q.namespace_id = %(ns)s AND {window}"
_DAY = "(q.created_at AT TIME ZONE 'UTC')::date"

# A returned result's verdict: its own (result_feedback), else the search's overall one. Rows
# are read defensively: a results value that is not an array, or ranks that are not an object,
# count as empty instead of failing the page.
_RESULTS = """
    CROSS JOIN LATERAL jsonb_array_elements(
        CASE WHEN jsonb_typeof(q.results) = 'array' THEN q.results ELSE '[]'::jsonb END
    ) WITH ORDINALITY AS r(value, position)
"""
_VERDICT = """
    CASE q.result_feedback ->> (r.value ->> 'id')
        WHEN 'true' THEN true WHEN 'false' THEN false ELSE q.was_useful END
"""

# Each SELECT groups the log rows of a window by day (and its key): the roll-up stores them for
# closed days, the page adds them for the live days.
DAY_SQL = f"""
    SELECT {_DAY} AS day, count(*) AS searches,
           count(*) FILTER (WHERE q.evidence_gap) AS gaps,
           count(*) FILTER (WHERE q.results = '[]'::jsonb) AS zero,
           count(*) FILTER (WHERE q.feedback_at IS NOT NULL) AS judged,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY q.latency_ms) AS p50_ms,
           percentile_cont(0.95) WITHIN GROUP (ORDER BY q.latency_ms) AS p95_ms
    {_LOG} GROUP BY 1
"""
STRATEGY_SQL = f"""
    SELECT {_DAY} AS day, k.strategy,
           count(*) AS returned,
           count(*) FILTER (WHERE ({_VERDICT}) IS NOT NULL) AS judged,
           count(*) FILTER (WHERE ({_VERDICT})) AS useful
    FROM search_querylog q
    {_RESULTS}
    CROSS JOIN LATERAL jsonb_object_keys(
        CASE WHEN jsonb_typeof(r.value -> 'ranks') = 'object'
             THEN r.value -> 'ranks' ELSE '{{{{}}}}'::jsonb END
    ) AS k(strategy)
    WHERE q.namespace_id = %(ns)s AND {{window}}
    GROUP BY 1, 2
"""
MEMORY_SQL = f"""
    SELECT {_DAY} AS day, r.value ->> 'id' AS memory_id,
           count(*) AS returned,
           count(*) FILTER (WHERE r.position = 1) AS first,
           count(*) FILTER (WHERE ({_VERDICT})) AS useful
    FROM search_querylog q
    {_RESULTS}
    WHERE q.namespace_id = %(ns)s AND {{window}} AND jsonb_typeof(r.value -> 'id') = 'string'
    GROUP BY 1, 2
"""
QUERY_SQL = f"""
    SELECT {_DAY} AS day, lower(btrim(q.query)) AS key, count(*) AS searches,
           count(*) FILTER (WHERE q.evidence_gap) AS gaps, max(q.created_at) AS last_at
    {_LOG} GROUP BY 1, 2
"""

# A time range, and for the roll-up only the listed (missing) days inside it.
LIVE_WINDOW = "q.created_at >= %(since)s AND q.created_at < %(until)s"
MISSING_WINDOW = LIVE_WINDOW + f" AND {_DAY} = ANY(%(days)s)"

TABLES = {
    SearchDay: (DAY_SQL, "day, searches, gaps, zero, judged, p50_ms, p95_ms"),
    SearchDayStrategy: (STRATEGY_SQL, "day, strategy, returned, judged, useful"),
    SearchDayMemory: (MEMORY_SQL, "day, memory_id, returned, first, useful"),
    SearchDayQuery: (QUERY_SQL, "day, key, searches, gaps, last_at"),
}


def live_since(now: datetime | None = None) -> datetime:
    """Where the raw-log part of a period starts: midnight UTC of yesterday."""
    now = now or timezone.now()
    today = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return today - timedelta(days=LIVE_DAYS - 1)


def combined(model, *, namespace_id: int, since: datetime, until: datetime):
    """(sql, params): a table's rows for [since, until), the closed days from the roll-up and
    the live days from the raw log, in the same columns (call `ensure` first)."""
    sql, columns = TABLES[model]
    live = max(since, live_since())
    text = (
        f"SELECT {columns} FROM {model._meta.db_table} "
        "WHERE namespace_id = %(ns)s AND day >= %(first)s AND day < %(live_day)s "
        f"UNION ALL SELECT {columns} FROM ({sql.format(window=LIVE_WINDOW)}) AS live"
    )
    params = {
        "ns": namespace_id,
        "first": since.astimezone(UTC).date(),
        "live_day": live.astimezone(UTC).date(),
        "since": live,
        "until": until,
    }
    return text, params


def ensure(*, namespace_id: int, since: datetime, until: datetime) -> int:
    """Roll up every closed day of [since, until) that has no row yet; returns how many days.

    One INSERT ... SELECT per table over just the missing days (the (namespace, created_at)
    index narrows the scan to them). Concurrent pages may roll up the same day: the unique
    constraints and ON CONFLICT DO NOTHING keep one copy.
    """
    end = min(until, live_since())
    if since >= end:
        return 0
    wanted = _days(since, end)
    have = set(
        SearchDay.objects.filter(
            namespace_id=namespace_id, day__gte=wanted[0], day__lte=wanted[-1]
        ).values_list("day", flat=True)
    )
    missing = [d for d in wanted if d not in have]
    if not missing:
        return 0
    params = {
        "ns": namespace_id,
        "since": _midnight(missing[0]),
        "until": _midnight(missing[-1] + timedelta(days=1)),
        "days": missing,
    }
    with transaction.atomic(), connection.cursor() as cursor:
        for model, (sql, columns) in TABLES.items():
            table = model._meta.db_table
            cursor.execute(
                f"INSERT INTO {table} (namespace_id, {columns}) "
                f"SELECT %(ns)s, {columns} FROM ({sql.format(window=MISSING_WINDOW)}) AS s "
                "ON CONFLICT DO NOTHING",
                params,
            )
        # Days without a single search get their row too, so they are not looked at again.
        cursor.execute(
            f"INSERT INTO {SearchDay._meta.db_table} "
            "(namespace_id, day, searches, gaps, zero, judged) "
            "SELECT %(ns)s, d, 0, 0, 0, 0 FROM unnest(%(days)s::date[]) AS d "
            "ON CONFLICT DO NOTHING",
            params,
        )
    return len(missing)


def forget_day(*, namespace_id: int, day: date) -> None:
    """Drop a day's roll-up (its searches changed, e.g. got feedback); redone when next read."""
    for model in TABLES:
        model.objects.filter(namespace_id=namespace_id, day=day).delete()


def forget(*, namespace_id: int) -> None:
    """Drop a namespace's whole roll-up (after search-log rows were written or moved in bulk)."""
    for model in TABLES:
        model.objects.filter(namespace_id=namespace_id).delete()


def _days(since: datetime, until: datetime) -> list[date]:
    first, last = since.astimezone(UTC).date(), until.astimezone(UTC).date()
    return [first + timedelta(days=i) for i in range((last - first).days)]


def _midnight(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=UTC)
