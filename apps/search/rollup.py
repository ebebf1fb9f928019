"""The analytics page's daily roll-up of the search log (models SearchDay*).

A closed day (before today, UTC) is aggregated once, by the first page that needs it, into
four narrow tables: per day, per day and strategy, per day and returned memory, per day and
query text. The page then reads those rows for the closed days (whole weeks summed once
more) and aggregates only today from the raw log, through the same SQL, so both halves agree
to the row. Feedback on an old search drops its day's rows (`forget_day`), and the next page
view rolls that day up again.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

from django.db import connection, models, transaction
from django.utils import timezone

from .models import SearchDay, SearchDayMemory, SearchDayQuery, SearchDayStrategy

# A log row's created_at is its INSERT time, so a day is complete once the transactions open at
# midnight have committed: until GRACE after midnight, yesterday is still read from the raw log.
GRACE = timedelta(minutes=10)

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
# The window's log rows behind a fence (OFFSET 0): the planner guesses a hundred rows per
# JSON function call, and without the fence that guess made it scan the whole log in parallel
# instead of reading the window's few rows through the (namespace, created_at) index.
_FENCED = "(SELECT * FROM search_querylog q WHERE q.namespace_id = %(ns)s AND {window} OFFSET 0)"
STRATEGY_SQL = f"""
    SELECT {_DAY} AS day, k.strategy,
           count(*) AS returned,
           count(*) FILTER (WHERE ({_VERDICT}) IS NOT NULL) AS judged,
           count(*) FILTER (WHERE ({_VERDICT})) AS useful
    FROM {_FENCED} AS q
    {_RESULTS}
    CROSS JOIN LATERAL jsonb_object_keys(
        CASE WHEN jsonb_typeof(r.value -> 'ranks') = 'object'
             THEN r.value -> 'ranks' ELSE '{{{{}}}}'::jsonb END
    ) AS k(strategy)
    GROUP BY 1, 2
"""
MEMORY_SQL = f"""
    SELECT {_DAY} AS day, r.value ->> 'id' AS memory_id,
           count(*) AS returned,
           count(*) FILTER (WHERE r.position = 1) AS first,
           count(*) FILTER (WHERE ({_VERDICT})) AS useful
    FROM {_FENCED} AS q
    {_RESULTS}
    WHERE jsonb_typeof(r.value -> 'id') = 'string'
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
# Tables that also hold closed weeks (span 7): their key and how a week sums its days.
WEEKLY = {
    SearchDayMemory: ("memory_id", "sum(returned), sum(first), sum(useful)"),
    SearchDayQuery: ("key", "sum(searches), sum(gaps), max(last_at)"),
}


def live_since(now: datetime | None = None) -> datetime:
    """Where the raw-log part of a period starts: today's midnight (UTC), or yesterday's in
    the first minutes of the day."""
    now = (now or timezone.now()).astimezone(UTC)
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    return today if now - today >= GRACE else today - timedelta(days=1)


def combined(
    model: type[models.Model], *, namespace_id: int, since: datetime, until: datetime
) -> tuple[str, dict[str, Any]]:
    """(sql, params): a table's rows for [since, until), the closed days from the roll-up (whole
    weeks from their week rows where the table has them) and the live days from the raw log,
    in the same columns (call `ensure` first)."""
    sql, columns = TABLES[model]
    live = max(since, live_since())
    first, live_day = since.astimezone(UTC).date(), live.astimezone(UTC).date()
    weeks = _full_weeks(first, live_day) if model in WEEKLY else None
    if weeks:
        rolled = (
            "(span = 7 AND day >= %(week_from)s AND day < %(week_to)s) OR (span = 1 AND ("
            "day >= %(first)s AND day < %(week_from)s"
            " OR day >= %(week_to)s AND day < %(live_day)s))"
        )
    else:
        rolled = "day >= %(first)s AND day < %(live_day)s"
        rolled += " AND span = 1" if model in WEEKLY else ""
    text = (
        f"SELECT {columns} FROM {model._meta.db_table} WHERE namespace_id = %(ns)s AND ({rolled}) "
        f"UNION ALL SELECT {columns} FROM ({sql.format(window=LIVE_WINDOW)}) AS live"
    )
    params: dict[str, Any] = {
        "ns": namespace_id,
        "first": first,
        "live_day": live_day,
        "week_from": weeks[0] if weeks else None,
        "week_to": weeks[1] if weeks else None,
        "since": live,
        "until": until,
    }
    return text, params


def _full_weeks(first: date, end: date) -> tuple[date, date] | None:
    """The Mondays bounding the whole weeks inside [first, end), or None if there are none."""
    start = first + timedelta(days=(7 - first.weekday()) % 7)
    stop = end - timedelta(days=end.weekday())
    return (start, stop) if start < stop else None


def ensure(*, namespace_id: int, since: datetime, until: datetime) -> int:
    """Roll up every closed day of [since, until) that has no row yet; returns how many days.

    One INSERT ... SELECT per table over just the missing days (the (namespace, created_at)
    index narrows the scan to them), then the whole weeks. Concurrent pages may roll up the
    same day: the unique constraints and ON CONFLICT DO NOTHING keep one copy.
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
    with transaction.atomic():
        _roll_days(namespace_id, missing)
        # Every day of the range is there now: sum the whole weeks that have no week row (a
        # day dropped by forget_day took its week along, so it is redone here too).
        weeks = _full_weeks(wanted[0], wanted[-1] + timedelta(days=1))
        if weeks:
            _roll_weeks(namespace_id, *weeks)
    # Fresh statistics, or the planner takes the thousands of new rows for one (and sorts).
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {', '.join(m._meta.db_table for m in TABLES)}")
    return len(missing)


def _roll_days(namespace_id: int, missing: list[date]) -> None:
    params: dict[str, Any] = {
        "ns": namespace_id,
        "since": _midnight(missing[0]),
        "until": _midnight(missing[-1] + timedelta(days=1)),
        "days": missing,
    }
    with transaction.atomic(), connection.cursor() as cursor:
        # Sorting and hashing a month of exploded results spills to disk at the default.
        cursor.execute("SET LOCAL work_mem = '64MB'")
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


def _roll_weeks(namespace_id: int, week_from: date, week_to: date) -> None:
    """Sum the days of each whole week in [week_from, week_to) that has no week row yet."""
    mondays = [week_from + timedelta(days=7 * i) for i in range((week_to - week_from).days // 7)]
    for model, (key, sums) in WEEKLY.items():
        done = set(
            model._default_manager.filter(
                namespace_id=namespace_id, span=7, day__gte=week_from, day__lt=week_to
            )
            .values_list("day", flat=True)
            .distinct()
        )
        todo = [m for m in mondays if m not in done]
        if not todo:
            continue
        columns = TABLES[model][1].split(", ")[2:]
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {model._meta.db_table} "
                f"(namespace_id, day, span, {key}, {', '.join(columns)}) "
                f"SELECT %(ns)s, date_trunc('week', day)::date, 7, {key}, {sums} "
                f"FROM {model._meta.db_table} WHERE namespace_id = %(ns)s AND span = 1 "
                "AND day >= %(start)s AND day < %(stop)s "
                "AND date_trunc('week', day)::date = ANY(%(todo)s) "
                f"GROUP BY 2, {key} ON CONFLICT DO NOTHING",
                {
                    "ns": namespace_id,
                    "start": todo[0],
                    "stop": todo[-1] + timedelta(7),
                    "todo": todo,
                },
            )


def forget_day(*, namespace_id: int, day: date) -> None:
    """Drop a day's roll-up and its week's (its searches changed, e.g. got feedback); both are
    redone when next read."""
    for model in TABLES:
        model._default_manager.filter(namespace_id=namespace_id, day=day).delete()
    monday = day - timedelta(days=day.weekday())
    for model in WEEKLY:
        model._default_manager.filter(namespace_id=namespace_id, day=monday, span=7).delete()


def forget(*, namespace_id: int) -> None:
    """Drop a namespace's whole roll-up (after search-log rows were written or moved in bulk)."""
    for model in TABLES:
        model._default_manager.filter(namespace_id=namespace_id).delete()


def _days(since: datetime, until: datetime) -> list[date]:
    first, last = since.astimezone(UTC).date(), until.astimezone(UTC).date()
    return [first + timedelta(days=i) for i in range((last - first).days)]


def _midnight(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=UTC)
