"""The one date parser: what every door accepts as an instant, and what it refuses."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from apps.core.dates import parse_instant
from apps.core.exceptions import ValidationFailed
from apps.search.pipeline.timeexpr import TimeOutOfRange, parse_time_expression

NOW = datetime(2026, 3, 11, 15, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-03-01", datetime(2024, 3, 1, tzinfo=UTC)),
        ("2024-03-01T09:30", datetime(2024, 3, 1, 9, 30, tzinfo=UTC)),  # no zone means UTC
        ("2024-03-01T09:30:00Z", datetime(2024, 3, 1, 9, 30, tzinfo=UTC)),
        ("2024-03-01T09:30:00+02:00", datetime(2024, 3, 1, 7, 30, tzinfo=UTC)),
        (" 2024-03-01 09:30:00.5z ", datetime(2024, 3, 1, 9, 30, 0, 500000, tzinfo=UTC)),
        (date(2024, 3, 1), datetime(2024, 3, 1, tzinfo=UTC)),
        (datetime(2024, 3, 1, 12), datetime(2024, 3, 1, 12, tzinfo=UTC)),
        (None, None),
        ("", None),
    ],
)
def test_accepted_forms_become_utc(value, expected):
    parsed = parse_instant(value, field="when")
    assert parsed == expected
    if parsed is not None:
        assert parsed.utcoffset() == timedelta(0)


@pytest.mark.parametrize(
    "value",
    [
        "9999-12-31T23:59:59-14:00",  # the poison memory of issue 12
        "0001-01-01T00:00:00+14:00",
        "1899-12-31T23:59:59Z",
        "2201-01-01",
        "9999-12-31",
        datetime(9999, 12, 31, 23, 59, tzinfo=timezone(timedelta(hours=-14))),
        "yesterday",
        "2024-13-01",
        "2024-03-01\x00",
        "\ud800",
        "1" * 5000,
        12345,
        True,
        ["2024-03-01"],
        {"date": "2024-03-01"},
    ],
)
def test_refused_values_name_the_field(value):
    with pytest.raises(ValidationFailed) as caught:
        parse_instant(value, field="items[2].created_at")
    assert list(caught.value.errors) == ["items[2].created_at"]


def test_the_edges_of_the_range_are_accepted():
    assert parse_instant("1900-01-01T00:00:00Z", field="x").year == 1900
    assert parse_instant("2200-12-31T23:59:59Z", field="x").year == 2200


@pytest.mark.parametrize(
    "phrase",
    ["last 3000 years", "9999", "in 9999", "since 2500", "last 99999999999999 days", "1850"],
)
def test_time_expressions_outside_the_range_are_refused_not_crashed(phrase):
    with pytest.raises(TimeOutOfRange):
        parse_time_expression(phrase, NOW)


def test_last_week_is_the_previous_calendar_week():
    found = parse_time_expression("last week", NOW)  # NOW is a Wednesday
    assert found.after == datetime(2026, 3, 2, tzinfo=UTC)
    assert found.before == datetime(2026, 3, 9, tzinfo=UTC)
