"""Per-file diversity: at most N results from one file, 0 = off, order kept."""

from __future__ import annotations

import pytest

from apps.search.pipeline.diversify import diversify
from tests.factories import ranked


def _items():
    items = [ranked(str(i), 1 - i / 10, file_path="x.py") for i in range(3)]
    return items + [ranked("y", 0.5, file_path="y.py"), ranked("z", 0.4)]


@pytest.mark.parametrize(("cap", "kept"), [(0, 5), (1, 3), (2, 4), (3, 5)])
def test_per_file_cap_and_zero_is_off(cap, kept):
    assert len(diversify(_items(), cap)) == kept


def test_order_is_kept_and_memories_without_a_file_are_never_dropped():
    out = diversify(_items(), 1)
    assert [r.id for r in out] == ["0", "y", "z"]
