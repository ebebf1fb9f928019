"""Time phrases become [after, before) ranges relative to `now` (the caller's as_of)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from apps.search.pipeline.timeexpr import find_time_phrase, parse_time_expression

NOW = datetime(2024, 5, 15, 12, 30, tzinfo=UTC)  # a Wednesday


def d(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


@pytest.mark.parametrize(
    ("phrase", "after", "before"),
    [
        ("yesterday", d(2024, 5, 14), d(2024, 5, 15)),
        ("today", d(2024, 5, 15), d(2024, 5, 16)),
        ("last week", d(2024, 5, 6), d(2024, 5, 13)),
        ("this week", d(2024, 5, 13), d(2024, 5, 20)),
        ("3 days ago", d(2024, 5, 12), d(2024, 5, 13)),
        ("two weeks ago", d(2024, 5, 1), d(2024, 5, 8)),
        ("since March", d(2024, 3, 1), None),
        ("before April", None, d(2024, 4, 1)),
        ("last month", d(2024, 4, 1), d(2024, 5, 1)),
        ("2024-03-05", d(2024, 3, 5), d(2024, 3, 6)),
        ("since 2023-01-01", d(2023, 1, 1), None),
        ("March 2023", d(2023, 3, 1), d(2023, 4, 1)),
        ("in the last 2 weeks", d(2024, 5, 1, 12, 30), NOW),
    ],
)
def test_phrase_ranges(phrase, after, before):
    parsed = parse_time_expression(phrase, NOW)
    assert parsed is not None
    assert (parsed.after, parsed.before) == (after, before)


def test_month_later_than_now_means_last_year():
    parsed = parse_time_expression("since November", NOW)
    assert parsed.after == d(2023, 11, 1)


def test_other_dates_go_through_dateparser():
    parsed = parse_time_expression("May 7, 2023", NOW)
    assert (parsed.after, parsed.before) == (d(2023, 5, 7), d(2023, 5, 8))


def test_nonsense_is_not_a_time():
    assert parse_time_expression("banana bread", NOW) is None


@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ("what did we decide last week about caching", "last week"),
        ("What event is Nate organizing in June 2022?", "in June 2022"),
        ("errors since 2024-01-02", "since 2024-01-02"),
        ("how does the cache work", ""),
    ],
)
def test_find_time_phrase_in_queries(text, phrase):
    assert find_time_phrase(text) == phrase


@pytest.mark.parametrize(
    ("text", "after", "before"),
    [
        ("What did Jon do in the last week of August 2023?", d(2023, 8, 25), d(2023, 9, 1)),
        ("Which tournament did Nate win in the beginning of November 2022?",
         d(2022, 11, 1), d(2022, 11, 11)),
        ("Was the first half of September 2022 a good month?", d(2022, 9, 1), d(2022, 9, 16)),
        ("Where was Tim in the second week of November?", d(2023, 11, 8), d(2023, 11, 15)),
        ("plans for mid-July 2023", d(2023, 7, 11), d(2023, 7, 21)),
        ("the end of February 2024", d(2024, 2, 21), d(2024, 3, 1)),
    ],
)  # fmt: skip
def test_part_of_a_month_is_that_part_not_a_relative_week(text, after, before):
    parsed = parse_time_expression(find_time_phrase(text), NOW)
    assert parsed is not None
    assert (parsed.after, parsed.before) == (after, before)


def test_end_followed_by_may_the_verb_is_not_a_date():
    assert find_time_phrase("in the end may be the best option") == ""
