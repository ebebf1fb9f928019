"""The stage timings a search reports: each stage's milliseconds, summed over repeated runs."""

from __future__ import annotations

import time

import pytest

from apps.search.services import search
from apps.search.timing import Timer, probe
from memoryhub.replica.routing import read_connection


def test_a_stage_timed_twice_reports_the_sum():
    timer = Timer()
    assert timer("fetch", time.sleep, 0.01) is None
    with timer.span("fetch"):
        time.sleep(0.01)
    assert timer.timings["fetch"] >= 20


def test_a_failing_stage_is_still_timed():
    timer = Timer()
    with pytest.raises(ValueError), timer.span("analyse"):
        raise ValueError("bad")
    assert "analyse" in timer.timings


@pytest.mark.django_db
def test_a_profile_counts_each_stages_cpu_and_statements(knowledge, namespace):
    """`evaluate --profile` reads these: the searching thread's CPU and the SQL statements of
    each stage, summed over the searches run under the probe."""
    with probe(read_connection) as collected:
        search(namespace=namespace, query="storage decision")
    assert collected.statements["payload"] >= 1 and collected.cpu_ms["payload"] > 0
    # The row fetch reads a kept namespace's rows from the process: CPU, no statement.
    assert collected.statements["fetch"] == 0 and collected.cpu_ms["fetch"] > 0
    assert collected.statements["order"] == 0  # a pure-Python stage sends nothing
    assert collected.sent >= sum(collected.statements.values())


def test_outside_a_profile_a_stage_collects_nothing():
    timer = Timer()
    with timer.span("fetch"):
        pass
    assert set(timer.timings) == {"fetch"}
