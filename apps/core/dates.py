"""The one date parser for every door (REST, MCP, UI, imports, search filters).

Reads and writes must agree on what an instant is, or a value one door accepts becomes a row
another door cannot read back (a created_at of year 9999 at -14:00 overflows Python's datetime
when PostgreSQL hands it back in UTC). So every date that enters goes through `parse_instant`:

- ISO 8601 date ("2024-03-01", meaning its midnight) or date-time, as text or a datetime/date;
- a missing time zone means UTC (one rule, whatever TIME_ZONE says);
- the result is normalised to UTC and must lie within [EARLIEST, LATEST]: years before 1900 or
  after 2200 are refused, which also keeps a margin for date arithmetic (ranges, decay) and
  for what PostgreSQL and Python can both hold.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time

from .exceptions import ValidationFailed

MIN_YEAR = 1900
MAX_YEAR = 2200
EARLIEST = datetime(MIN_YEAR, 1, 1, tzinfo=UTC)
LATEST = datetime(MAX_YEAR, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)
_MAX_TEXT = 64  # the longest ISO 8601 form is about 35 characters
EXAMPLE = "e.g. 2024-03-01 or 2024-03-01T09:30:00Z"


def in_range(moment: datetime) -> bool:
    """True when an aware datetime lies within the supported years."""
    return EARLIEST <= moment <= LATEST


def parse_instant(value: object, *, field: str) -> datetime | None:
    """An aware UTC datetime, or None for None/"". Anything else raises ValidationFailed
    naming `field`."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, date):
        parsed = datetime.combine(value, time.min)
    elif isinstance(value, str):
        parsed = _parse_text(value, field)
    else:
        raise ValidationFailed({field: f"Expected an ISO 8601 date or date-time text, {EXAMPLE}."})
    if parsed.tzinfo is None or parsed.utcoffset() is None:
        parsed = parsed.replace(tzinfo=UTC)
    try:
        parsed = parsed.astimezone(UTC)
    except (OverflowError, ValueError):
        raise _out_of_range(field) from None
    if not in_range(parsed):
        raise _out_of_range(field)
    return parsed


def _parse_text(value: str, field: str) -> datetime:
    text = value.strip()
    if len(text) > _MAX_TEXT or "\x00" in text:
        raise ValidationFailed({field: f"Not an ISO 8601 date or date-time; {EXAMPLE}."})
    if text[-1:] in ("z", "Z"):
        text = text[:-1] + "+00:00"
    try:
        return datetime.fromisoformat(text)
    except (ValueError, OverflowError):
        pass
    try:
        return datetime.combine(date.fromisoformat(text), time.min)
    except (ValueError, OverflowError):
        raise ValidationFailed(
            {field: f"{value[:40]!r} is not an ISO 8601 date or date-time; {EXAMPLE}."}
        ) from None


def _out_of_range(field: str) -> ValidationFailed:
    return ValidationFailed({field: f"Dates must lie between the years {MIN_YEAR} and {MAX_YEAR}."})
