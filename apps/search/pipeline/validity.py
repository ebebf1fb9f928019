"""Search that respects time: what a superseded memory's match is worth now.

The candidate queries only see memories valid at the search's moment (Scope.where), so a
superseded fact never comes back as current. Where the old fact matches the question better
than its successor does ("What do we use for CI?" against "Our CI runs on Jenkins."), the
match is not lost: `successors` finds the ended memories closest to the query and hands their
successors over as a strategy list of their own, scored by the old memory's cosine. The ended
memories are few and sit in a small partial index (memory_ns_ended), so a namespace with
none pays one empty index probe, and one the process keeps pays none (reads/edges.py).
"""

from __future__ import annotations

import numpy as np

from .reads.edges import successors_of_ended
from .scope import Scope

STRATEGY = "successor"
MIN_SIMILARITY = 0.3  # the semantic strategy's floor


def successors(scope: Scope, vector: np.ndarray, limit: int) -> list[tuple[str, float]]:
    """(successor id, best cosine of a memory it superseded), best first, for the ended
    memories of the namespace; the caller keeps those that pass the scope."""
    if scope.valid_at is None:
        return []
    return successors_of_ended(scope, vector, limit, MIN_SIMILARITY)
