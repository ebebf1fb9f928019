"""A namespace imported since the table's last ANALYZE must search as fast as any other.

The neighbour stage probes, for each candidate's timestamp, the nearest earlier and later
memory of the namespace. Measured at scale: 10,000 memories imported into a table of 100,000
stayed under autovacuum's 10% threshold, the planner still believed the namespace held one
row, and each probe sorted the whole namespace: 1.4-2 s a search instead of ~6 ms. Here a
smaller table is put in the same state (statistics that have never seen the namespace), and
the probes' plan is read under the settings the search runs them with."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from apps.memories.models import Memory, Namespace
from apps.search.pipeline import retrieve
from apps.search.pipeline.scope import Scope
from apps.vectors.nearest import walk_rows
from tests.factories import BASE_TIME, bare_memories

pytestmark = pytest.mark.django_db


def _bulk(namespace: Namespace, count: int, per_session: int) -> list[Memory]:
    """Dialog-like rows without the model (the plan does not depend on vectors): sessions of
    `per_session` turns sharing one timestamp, a day apart, external ids giving the order."""

    def fields(n: int) -> dict:
        return {
            "created_at": BASE_TIME + timedelta(days=n // per_session),
            "external_id": f"{namespace.name}-{n:05d}",
        }

    return bare_memories(namespace, count, fields)


def _plan(sql: str, args: list | None, *, settings: str = "") -> str:
    """The plan, with `settings` sent in front as the search sends them (one execute)."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(settings + "EXPLAIN " + sql, args)
        return "\n".join(row[0] for row in walk_rows(cursor))


def test_probes_of_a_namespace_the_statistics_have_not_seen_walk_the_index():
    old = Namespace.objects.create(name="analyzed")
    _bulk(old, 6000, per_session=30)
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {Memory._meta.db_table}")
    new = Namespace.objects.create(name="imported")  # after ANALYZE: unknown to the planner
    imported = _bulk(new, 2000, per_session=20)

    scope = Scope(namespace_id=new.id)
    times = [m.created_at for m in imported[::97]]
    sql, args = retrieve.window_query(scope, times, gap_seconds=2 * 86400)
    stale = _plan(sql, args)
    # The test reproduces the failure: left to itself the planner sorts inside the probes.
    assert "Sort Key: m_1.created_at" in stale or "Sort Key: m_2.created_at" in stale
    # Planned as the search sends it: the statement window_rows executes, settings in front.
    with CaptureQueriesContext(connection) as captured:
        retrieve.window_rows(scope, times, gap_seconds=2 * 86400)
    settings, _, statement = captured.captured_queries[-1]["sql"].rpartition("; ")
    assert settings + "; " == retrieve.PROBE_SETTINGS
    planned = _plan(statement, None, settings=settings + "; ")
    assert "Sort Key: m_1.created_at" not in planned
    assert "Sort Key: m_2.created_at" not in planned
    # each probe is one index range over (namespace, created_at)
    # (t is the given timestamps, named t_1, t_2 where the plan reads it more than once)
    index_range = rf"Index Cond: \(\(namespace_id = {new.id}\) AND \(created_at {{}} t(_\d)?\.ts\)"
    assert re.search(index_range.format("<"), planned)
    assert re.search(index_range.format(">"), planned)

    # And the search's own call still finds the sessions and their neighbours.
    found = retrieve.window_rows(scope, times, gap_seconds=2 * 86400)
    stamps = {t for t in times}
    assert {c for _, c, _ in found} >= stamps
    same_session = [i for i, c, _ in found if c == imported[0].created_at]
    assert len(same_session) == 20
