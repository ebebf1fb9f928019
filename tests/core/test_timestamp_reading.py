"""Timestamps read back from PostgreSQL are exactly the instants stored. The connection's
timestamptz loader reads UTC values with a fast parser (apps/core/readside.py); it must agree
with Django's own loader to the microsecond, in the zone Django gives them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from django.db import connection
from psycopg.postgres import types
from psycopg.pq import Format

INSTANTS = [
    datetime(2023, 5, 8, 13, 56, tzinfo=UTC),
    datetime(2023, 5, 8, 13, 56, 0, 500000, tzinfo=UTC),
    datetime(2023, 5, 8, 13, 56, 0, 123456, tzinfo=UTC),
    datetime(1999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    datetime(2024, 2, 29, 0, 0, 0, 1, tzinfo=UTC),
    datetime(2023, 3, 26, 1, 30, tzinfo=timezone(timedelta(hours=5, minutes=30))),
]


def _read(values: list[datetime]) -> list[datetime]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT unnest(%s::timestamptz[])", [values])
        return [row[0] for row in cursor.fetchall()]


@pytest.mark.django_db
def test_stored_instants_read_back_exactly_in_djangos_zone():
    got = _read(INSTANTS)
    assert got == INSTANTS  # the same instants (aware datetimes compare as instants)
    assert [g.utcoffset() for g in got] == [timedelta(0)] * len(INSTANTS)
    assert all(g.tzinfo is connection.timezone for g in got)


@pytest.mark.django_db
def test_fast_reading_agrees_with_djangos_loader():
    """The same text through the installed loader and through the one Django registered."""
    connection.ensure_connection()
    adapters = connection.connection.adapters
    installed = adapters.get_loader(types["timestamptz"].oid, Format.TEXT)
    assert installed.clamps  # the forgiving loader is the one in place
    django_loader = installed.__mro__[1](types["timestamptz"].oid, connection.connection)
    fast = installed(types["timestamptz"].oid, connection.connection)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT (timestamptz '2020-01-01 00:00:00+00' + make_interval(secs => s * 9973.123457))"
            "::text FROM generate_series(0, 2000) s"
        )
        texts = [row[0].encode() for row in cursor.fetchall()]
    assert all(fast.load(t) == django_loader.load(t) for t in texts)
    assert all(fast.load(t).tzinfo is django_loader.load(t).tzinfo for t in texts)


@pytest.mark.django_db
def test_an_instant_read_again_is_the_same_instant_in_the_same_zone():
    """The loader remembers instants it parsed by their text; a second read (a search reads
    the same rows again and again) must give what the first gave."""
    first, second = _read(INSTANTS), _read(INSTANTS)
    assert first == second == INSTANTS
    assert all(g.tzinfo is connection.timezone for g in second)
