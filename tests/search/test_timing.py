"""The stage timings a search reports: each stage's milliseconds, summed over repeated runs."""

from __future__ import annotations

import time

import pytest

from apps.search.timing import Timer


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
