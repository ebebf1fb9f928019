"""A process pinned to fewer cores than the machine has (taskset, a container's cpuset) sizes
its encoder threads and import workers by those cores."""

from __future__ import annotations

import os

import pytest

from apps.transfer.parallel_import import default_workers
from apps.vectors.embeddings import usable_cores


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="no CPU affinity here")
def test_a_process_pinned_to_one_core_counts_one():
    everything = os.sched_getaffinity(0)
    try:
        os.sched_setaffinity(0, {min(everything)})
        assert usable_cores() == 1
        assert default_workers() == 1
    finally:
        os.sched_setaffinity(0, everything)
    assert usable_cores() == len(everything)
