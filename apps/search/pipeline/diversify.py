"""Stage 8: at most N results from one file (SPEC: search_diversity_max_per_file, 0 = off)."""

from __future__ import annotations

from collections.abc import Sequence

from apps.search.types import Ranked


def diversify(items: Sequence[Ranked], max_per_file: int) -> list[Ranked]:
    """Keep order; at most `max_per_file` results share one non-empty file_path (0 = off)."""
    if max_per_file <= 0:
        return list(items)
    seen: dict[str, int] = {}
    kept = []
    for r in items:
        if r.file_path:
            seen[r.file_path] = seen.get(r.file_path, 0) + 1
            if seen[r.file_path] > max_per_file:
                continue
        kept.append(r)
    return kept
