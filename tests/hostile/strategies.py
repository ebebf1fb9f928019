"""Hostile values for the input-edge suite: what the issue-12 probes found plus what Hypothesis
generates around them (every Unicode code point, lone surrogates included; odd numbers; deep
and wide JSON; dates at and beyond the supported range)."""

from __future__ import annotations

from hypothesis import strategies as st

NASTY_TEXT = [
    "",
    " ",
    "\x00",
    "nul \x00 inside",
    "\ud800",
    "lone \udfff surrogate",
    "\ufeff",
    "\u202e reversed",
    "'; DROP TABLE memories_memory; --",
    "<script>alert(1)</script>",
    "x" * 5000,
    "%00",
    "../../etc/passwd",
    "\\",
    "{{7*7}}",
]
NASTY_DATES = [
    "9999-12-31T23:59:59-14:00",
    "0001-01-01T00:00:00+14:00",
    "9999-12-31",
    "0000-00-00",
    "1970-01-01T00:00:00Z",
    "2024-02-30",
    "2024-03-01T25:61:61",
    "1899-12-31",
    "2201-01-01",
    "+10000-01-01",
    "-0001-01-01",
    "1e999",
    "now",
    "2024-03-01T09:30:00+99:00",
]
NASTY_TIME_EXPR = [
    "last 3000 years",
    "9999",
    "in 9999",
    "since 0001",
    "last 99999999999999999999 days",
    "99999999 weeks ago",
    "before 1066",
    "during december 9999",
    "next week",
    "since march 30000",
]
NASTY_NUMBERS = [
    float("inf"),
    float("-inf"),
    float("nan"),
    1e308,
    -1e308,
    2**64,
    -(2**63) - 1,
    10**400,
    0.5,
    -0.0,
    True,
]


def deep(levels: int):
    value: object = 1
    for _ in range(levels):
        value = {"k": value}
    return value


any_text = st.one_of(
    st.sampled_from(NASTY_TEXT),
    st.text(st.characters(codec=None, exclude_categories=()), max_size=60),
    st.text(max_size=20),
)
any_date = st.one_of(
    st.sampled_from(NASTY_DATES),
    st.datetimes().map(lambda d: d.isoformat()),
    st.dates().map(lambda d: d.isoformat()),
    any_text,
    st.integers(),
)
any_time_expr = st.one_of(
    st.sampled_from(NASTY_TIME_EXPR),
    st.builds(
        "{} {} {}".format,
        st.sampled_from(["last", "past", "since", "in", "before"]),
        st.integers(min_value=0, max_value=10**30),
        st.sampled_from(["days", "weeks", "months", "years", ""]),
    ),
    st.integers(min_value=0, max_value=99999).map(str),
    any_text,
)
any_number = st.one_of(
    st.sampled_from(NASTY_NUMBERS), st.floats(), st.integers(), st.text(max_size=5)
)
json_leaf = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), any_text, st.sampled_from(NASTY_NUMBERS)
)
any_json = st.one_of(
    st.recursive(
        json_leaf,
        lambda children: st.one_of(
            st.lists(children, max_size=4), st.dictionaries(any_text, children, max_size=4)
        ),
        max_leaves=12,
    ),
    st.sampled_from([deep(30), deep(150), {"\x00": 1}, {"k": "\x00"}, {"\ud800": "x"}]),
)
any_value = st.one_of(any_text, any_number, any_json, any_date)
