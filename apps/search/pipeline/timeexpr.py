"""Time expressions ("yesterday", "last week", "3 days ago", "since March", ISO dates) turned
into an [after, before) range relative to `now` (the caller's `as_of`, else the current time).

Common phrases are matched by rule so their ranges are exact and predictable; anything else
that looks like a date is handed to dateparser (a maintained library) with `now` as its base.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from typing import cast

from dateutil.relativedelta import relativedelta

from apps.core.dates import MAX_YEAR, MIN_YEAR, in_range

UNITS = {"day": 1, "week": 7, "fortnight": 14}
MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]
MONTH_RE = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "couple of": 2, "few": 3,
}  # fmt: skip
NUM = r"(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|couple of|few)"

# A part of a named month ("the last week of August 2023", "early May"): listed first so that
# "last week of August" is not read as "last week" when both start at the same word.
PART = (
    r"(?:(?:(?:first|second|third|fourth|last|final)\s+(?:week|weekend|fortnight|half)"
    r"|beginning|start|middle|end)\s+of\s+|(?:early|mid|late)(?:\s+|-))"
)
PATTERNS = (
    rf"\b(?:(?:in|during|on|at)\s+)?(?:the\s+)?{PART}{MONTH_RE}(?:,?\s+\d{{4}})?\b",
    r"\b(?:today|yesterday|tonight)\b",
    r"\b(?:this|last|past|previous)\s+(?:day|week|month|year|weekend)\b",
    rf"\b(?:in\s+the\s+)?(?:last|past)\s+{NUM}\s+(?:days?|weeks?|months?|years?)\b",
    rf"\b{NUM}\s+(?:days?|weeks?|months?|years?)\s+ago\b",
    r"\b(?:(?:since|after|before|until|on)\s+)?\d{4}-\d{2}-\d{2}(?:[t ]\d{2}:\d{2}(?::\d{2})?)?\b",
    rf"\b(?:since|after|before|until|in|during)\s+{MONTH_RE}(?:\s+\d{{1,2}}(?:st|nd|rd|th)?)?(?:,?\s+\d{{4}})?\b",
    rf"\b(?:on\s+)?\d{{1,2}}(?:st|nd|rd|th)?\s+{MONTH_RE},?\s+\d{{4}}\b",
    rf"\b{MONTH_RE}\s+\d{{4}}\b",
    rf"\b{MONTH_RE}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s*\d{{4}}\b",
    r"\b(?:since|after|before|until|in|during)\s+\d{4}\b(?!-)",
)
# A memory that mentions a time ("yesterday", "last Friday", "two weeks ago", "in March",
# "2022") is where the answer to a "when" question usually is: the dialog turn that tells of
# the event and dates it.
_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_MONTHS = "january|february|march|april|june|july|august|september|october|november|december"
MENTIONS_TIME = re.compile(
    r"\b(yesterday|today|tonight|tomorrow|ago|recently|weekend|the other day|"
    rf"(last|next|this|past) (night|week|month|year|summer|winter|spring|fall|{_WEEKDAYS})|"
    rf"{_WEEKDAYS}|{_MONTHS}|may [0-9]|[0-9]{{4}}|"
    r"(a|an|one|two|three|four|five|six|seven|eight|nine|ten|few|couple of|[0-9]+) "
    r"(days?|weeks?|months?|years?))\b"
)  # matched against lowercased text: 2.5x faster than re.IGNORECASE
# Questions that ask for a time or a duration: "When did ...", "What year ...", "How long ...".
ASKS_WHEN = re.compile(r"^\s*(when\b|what (year|month|date|day)\b|how long\b)", re.IGNORECASE)

_FIND = re.compile("|".join(f"(?:{p})" for p in PATTERNS), re.IGNORECASE)


class TimeOutOfRange(ValueError):
    """The phrase is understood but names a time outside the supported years."""

    def __init__(self, phrase: str):
        super().__init__(
            f"{phrase[:60]!r} lies outside the supported years {MIN_YEAR}..{MAX_YEAR}."
        )


@dataclass(frozen=True)
class TimeRange:
    after: datetime | None
    before: datetime | None
    phrase: str


def _day(dt: datetime) -> datetime:
    return dt.replace(hour=0, minute=0, second=0, microsecond=0)


def _month_start(year: int, month: int, tz: tzinfo | None) -> datetime:
    return datetime(year, month, 1, tzinfo=tz)


def _add_months(dt: datetime, months: int) -> datetime:
    """The first of the month `months` after (or before) dt's month."""
    return dt.replace(day=1) + relativedelta(months=months)


def _count(word: str) -> int:
    word = word.lower()
    return int(word) if word.isdigit() else NUMBER_WORDS.get(word, 1)


def _month_number(word: str) -> int:
    word = word.lower()[:3]
    return next(i + 1 for i, name in enumerate(MONTHS) if name.startswith(word))


def find_time_phrase(text: str) -> str:
    """The first time expression in free text ("" when none)."""
    match = _FIND.search(text or "")
    return match.group(0) if match else ""


def parse_time_expression(expr: str, now: datetime) -> TimeRange | None:
    """Range for one phrase; None when it is not understood. Raises TimeOutOfRange when the
    phrase reaches outside the supported years ("last 3000 years", "9999"), so that date
    arithmetic never overflows and no bound PostgreSQL cannot compare reaches a query."""
    phrase = " ".join((expr or "").lower().split())
    try:
        found = _parse(phrase, now)
    except (ValueError, OverflowError):
        raise TimeOutOfRange(phrase) from None
    if found is not None:
        for bound in (found.after, found.before):
            if bound is not None and not in_range(bound):
                raise TimeOutOfRange(phrase)
    return found


def _parse(phrase: str, now: datetime) -> TimeRange | None:
    if not phrase:
        return None
    today = _day(now)
    if phrase in ("today", "tonight"):
        return TimeRange(today, today + timedelta(days=1), phrase)
    if phrase == "yesterday":
        return TimeRange(today - timedelta(days=1), today, phrase)
    m = re.fullmatch(rf"(?:the )?(.+?)(?: of |-| )({MONTH_RE})(?:,? (\d{{4}}))?", phrase)
    if m and (part := _month_part(m.group(1))) is not None:
        return _part_of_month(_month(m.group(2), m.group(3), now), part, phrase)
    if m := re.fullmatch(r"(this|last|past|previous) (day|week|month|year|weekend)", phrase):
        return _named_period(m.group(1), m.group(2), now, phrase)
    if m := re.fullmatch(rf"(?:in the )?(?:last|past) {NUM} (day|week|month|year)s?", phrase):
        return TimeRange(_shift(now, m.group(2), -_count(m.group(1))), now, phrase)
    if m := re.fullmatch(rf"{NUM} (day|week|month|year)s? ago", phrase):
        return _ago(_count(m.group(1)), m.group(2), now, phrase)
    if m := re.fullmatch(r"(since|after|before|until|in|during|on) (.+)", phrase):
        inner = _parse(m.group(2), now)
        if inner is None:
            return None
        if m.group(1) in ("since", "after"):
            after = inner.after if m.group(1) == "since" else inner.before
            return TimeRange(after, None, phrase)
        if m.group(1) in ("before", "until"):
            before = inner.before if m.group(1) == "until" else inner.after
            return TimeRange(None, before, phrase)
        return TimeRange(inner.after, inner.before, phrase)
    if re.fullmatch(r"\d{4}", phrase):
        year = int(phrase)
        start = datetime(year, 1, 1, tzinfo=now.tzinfo)
        return TimeRange(start, start.replace(year=year + 1), phrase)
    if m := re.fullmatch(rf"({MONTH_RE})(?: (\d{{4}}))?", phrase):
        start = _month(m.group(1), m.group(2), now)
        return TimeRange(start, _add_months(start, 1), phrase)
    return _dateparser_day(phrase, now)


def _month(name: str, year: str | None, now: datetime) -> datetime:
    """The first instant of a named month; without a year, the latest one not after `now`."""
    month = _month_number(name)
    number = int(year) if year else now.year
    if not year and (number, month) > (now.year, now.month):
        number -= 1  # "March" said in January means the March that has passed
    return _month_start(number, month, now.tzinfo)


# Which days of a month a part names: (first day, day after the last; None = month's end).
# "last"/"final" parts count back from the month's end.
_MONTH_PARTS = {
    "first week": (1, 8),
    "second week": (8, 15),
    "third week": (15, 22),
    "fourth week": (22, 29),
    "first fortnight": (1, 15),
    "first half": (1, 16),
    "second half": (16, None),
    "beginning": (1, 11),
    "start": (1, 11),
    "early": (1, 11),
    "middle": (11, 21),
    "mid": (11, 21),
    "end": (21, None),
    "late": (21, None),
}
_FROM_END = {"week": 7, "weekend": 3, "fortnight": 14, "half": 15}


def _month_part(words: str) -> tuple[int, int | None] | tuple[str, int] | None:
    words = words.replace("final ", "last ")
    if words in _MONTH_PARTS:
        return _MONTH_PARTS[words]
    if words.startswith("last ") and words[5:] in _FROM_END:
        return ("from_end", _FROM_END[words[5:]])
    return None


def _part_of_month(
    start: datetime, part: tuple[int, int | None] | tuple[str, int], phrase: str
) -> TimeRange:
    end = _add_months(start, 1)
    if part[0] == "from_end":
        return TimeRange(end - timedelta(days=cast(int, part[1])), end, phrase)
    first, after_last = cast(tuple[int, int | None], part)
    return TimeRange(
        start.replace(day=first),
        start.replace(day=after_last) if after_last else end,
        phrase,
    )


def _named_period(which: str, unit: str, now: datetime, phrase: str) -> TimeRange:
    today = _day(now)
    if unit == "day":
        return (
            TimeRange(today - timedelta(days=1), today, phrase)
            if which != "this"
            else TimeRange(today, today + timedelta(days=1), phrase)
        )
    if unit in ("week", "weekend"):
        monday = today - timedelta(days=today.weekday())
        start = monday if which == "this" else monday - timedelta(days=7)
        if unit == "weekend":
            start += timedelta(days=5)
            return TimeRange(start, start + timedelta(days=2), phrase)
        return TimeRange(start, start + timedelta(days=7), phrase)
    if unit == "month":
        start = today.replace(day=1)
        start = start if which == "this" else _add_months(start, -1)
        return TimeRange(start, _add_months(start, 1), phrase)
    start = today.replace(month=1, day=1)
    start = start if which == "this" else start.replace(year=start.year - 1)
    return TimeRange(start, start.replace(year=start.year + 1), phrase)


def _shift(dt: datetime, unit: str, amount: int) -> datetime:
    if unit == "month":
        return _add_months(dt, amount).replace(day=min(dt.day, 28))
    if unit == "year":
        return dt.replace(year=dt.year + amount, day=min(dt.day, 28))
    return dt + timedelta(days=UNITS[unit] * amount)


def _ago(count: int, unit: str, now: datetime, phrase: str) -> TimeRange:
    start = _day(_shift(now, unit, -count))
    span = {"day": timedelta(days=1), "week": timedelta(days=7)}.get(unit)
    end = start + span if span else _add_months(start, 1 if unit == "month" else 12)
    return TimeRange(start, end, phrase)


def _dateparser_day(phrase: str, now: datetime) -> TimeRange | None:
    # Imported here: it adds ~50 ms to every process's start-up, and few queries reach it.
    import dateparser

    base = now.replace(tzinfo=None)
    # English only, like the phrase patterns that found it: with language detection, the
    # first phrase dateparser cannot read loads every locale (measured 3-9 s); with "en", 0.1 s.
    parsed = dateparser.parse(
        phrase,
        languages=["en"],
        settings={
            "RELATIVE_BASE": base,
            "PREFER_DATES_FROM": "past",
            "RETURN_AS_TIMEZONE_AWARE": False,
        },
    )
    if parsed is None:
        return None
    start = _day(parsed.replace(tzinfo=now.tzinfo))
    if re.search(r"\d{1,2}:\d{2}", phrase):
        start = parsed.replace(tzinfo=now.tzinfo)
        return TimeRange(start, start + timedelta(minutes=1), phrase)
    return TimeRange(start, start + timedelta(days=1), phrase)
