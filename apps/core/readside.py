"""Read-side defence: a row that is already odd in the database never makes a page fail.

The doors check what enters (apps.core.values, apps.core.dates), but rows written by SQL, by
older versions or by another tool may hold what Python cannot read: a timestamptz of
'infinity', before year 1 or after year 9999 (psycopg raises DataError while loading the row,
so the whole list, search or admin page that meets it answered 500), or jsonb nested deeper
than Python's recursion limit or holding a number longer than int() reads (Django's JSONField
raises while loading). On every new database connection the loaders of these two types are
replaced by ones that read such values as the nearest supported value instead of failing:

- an instant outside the supported years (apps.core.dates: 1900..2200), 'infinity' and
  '-infinity' included, reads as the nearest bound, so date arithmetic and time zones can
  never overflow on it either;
- jsonb Python cannot read reads as {"unreadable": "..."}, saying why.

The stored value is left as it is (a filter or sort in SQL still sees it). Values Python reads
but the code may not expect (metadata that is a list, a number or a string) are handled where
they are used, with `json_object`.
"""

from __future__ import annotations

import json
from datetime import datetime
from functools import lru_cache
from typing import Any

from psycopg import DataError
from psycopg.postgres import types
from psycopg.pq import Format
from psycopg.types.datetime import DateLoader, TimestampLoader
from psycopg.types.string import TextLoader

from . import dates

# Python reads jsonb text below this size without trouble (1,000 levels of nesting or a
# 4,300-digit number need more bytes than this), so only longer values are test-read.
_JSON_CHECK_BYTES = 900
# Timestamps remembered by their text per loader (see _clamping_tz_loader): ~100 bytes each.
_SEEN_INSTANTS = 20_000
UNREADABLE_JSON = {
    "unreadable": "The stored JSON is nested too deep or holds a number too long to read."
}


def json_object(value: Any) -> dict:
    """`value` when it is a JSON object, else {} (metadata stored as a list, text or number)."""
    return value if isinstance(value, dict) else {}


def as_int(value: Any, default: int = 0) -> int:
    """An int read from stored JSON (a chunk index), or `default` when it is not one."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    try:
        return int(value)
    except (OverflowError, ValueError):
        return default


def _clamped(moment, timezone):
    earliest, latest = dates.EARLIEST, dates.LATEST
    if timezone is None:  # USE_TZ = False: naive UTC values
        earliest, latest = earliest.replace(tzinfo=None), latest.replace(tzinfo=None)
    if moment < earliest:
        return earliest if timezone is None else earliest.astimezone(timezone)
    if moment > latest:
        return latest if timezone is None else latest.astimezone(timezone)
    return moment


@lru_cache
def _clamping_tz_loader(base: type) -> type:
    """A subclass of the timestamptz loader Django registered (it carries the connection's
    time zone) that reads out-of-range instants as the nearest supported one.

    It also reads the common case fast. Django's loader subclasses psycopg's pure-Python one
    (the C loaders cannot be subclassed), which took ~5 µs a value: a search reads ~600
    timestamps, ~3 ms of CPU. A value in UTC ("2023-05-08 13:56:00.5+00", what a connection
    in UTC sends) goes through `datetime.fromisoformat` (C, ~0.2 µs) and gets the same zone
    Django's loader would give it; anything else takes the loader's own path."""
    relabels = hasattr(base, "timezone")  # Django's loader: the result carries its zone
    # Instants read before, by their text: rows of one conversation session share one
    # timestamp, and a search reads the same few hundred again and again (parsing and
    # relabelling cost ~4 us a value, the lookup ~0.1 us). The loader class is one per time
    # zone, so is the cache; datetimes are immutable, so sharing them is safe.
    seen: dict[bytes, datetime] = {}

    class ClampingTzLoader(base):
        clamps = True

        def load(self, data):
            text = bytes(data)
            known = seen.get(text)
            if known is not None:
                return known
            if relabels and text.endswith(b"+00"):
                try:
                    moment = datetime.fromisoformat(text.decode())
                except ValueError:
                    pass
                else:
                    if dates.MIN_YEAR <= moment.year <= dates.MAX_YEAR:
                        moment = moment.replace(tzinfo=self.timezone)
                        if len(seen) >= _SEEN_INSTANTS:
                            seen.clear()
                        seen[text] = moment
                        return moment
            try:
                moment = super().load(data)
            except (DataError, OverflowError, ValueError):
                text = bytes(data)
                early = text.startswith(b"-") or text.endswith(b" BC")
                bound = dates.EARLIEST if early else dates.LATEST
                zone = getattr(self, "timezone", None)
                return bound.replace(tzinfo=None) if zone is None else bound.astimezone(zone)
            if dates.MIN_YEAR <= moment.year <= dates.MAX_YEAR:
                return moment
            return _clamped(moment, moment.tzinfo)

    return ClampingTzLoader


@lru_cache
def _clamping_naive_loader(kind: str) -> type:
    """timestamp (without time zone) and date, which date truncation in SQL produces (the
    admin's date hierarchy), read as the nearest supported value when out of range."""
    earliest, latest = dates.EARLIEST.replace(tzinfo=None), dates.LATEST.replace(tzinfo=None)
    if kind == "date":
        base, earliest, latest = DateLoader, earliest.date(), latest.date()
    else:
        base = TimestampLoader

    class ClampingLoader(base):
        clamps = True

        def load(self, data):
            try:
                value = super().load(data)
            except (DataError, OverflowError, ValueError):
                text = bytes(data)
                return earliest if text.startswith(b"-") or text.endswith(b" BC") else latest
            return min(max(value, earliest), latest)

    return ClampingLoader


@lru_cache
def _safe_jsonb_loader() -> type:
    """jsonb as text (what Django's JSONField parses), test-read when long. The pure-Python
    text loader is the base: psycopg's C loaders cannot be subclassed."""

    class SafeJsonbLoader(TextLoader):
        safe = True

        def load(self, data):
            text = super().load(data)
            if len(data) < _JSON_CHECK_BYTES or not isinstance(text, str):
                return text
            try:
                json.loads(text)
            except (RecursionError, ValueError):
                return json.dumps(UNREADABLE_JSON)
            return text

    return SafeJsonbLoader


def harden_connection(sender, connection, **kwargs) -> None:
    """connection_created receiver: install the forgiving loaders on a PostgreSQL connection."""
    if connection.vendor != "postgresql":
        return
    adapters = connection.connection.adapters
    tz_loader = adapters.get_loader(types["timestamptz"].oid, Format.TEXT)
    if tz_loader is not None and not getattr(tz_loader, "clamps", False):
        adapters.register_loader("timestamptz", _clamping_tz_loader(tz_loader))
    for kind in ("timestamp", "date"):
        loader = adapters.get_loader(types[kind].oid, Format.TEXT)
        if not getattr(loader, "clamps", False):
            adapters.register_loader(kind, _clamping_naive_loader(kind))
    json_loader = adapters.get_loader(types["jsonb"].oid, Format.TEXT)
    if json_loader is not None and not getattr(json_loader, "safe", False):
        adapters.register_loader("jsonb", _safe_jsonb_loader())
