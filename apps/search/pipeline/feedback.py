"""Pseudo-relevance feedback for the semantic retriever (a second hop from the first hits).

A question that asks for several things ("What has Alice painted?", "Which cities has Bob
been to?") is answered by turns from different sessions, and often only the first one or two
share words or meaning with the question. The best first hits say what such an answer looks
like: the query vector moved towards their centroid (Rocchio) finds the other turns that talk
about the same thing in other words. Its cosine is a strategy of its own ("feedback"), fused
at a fraction of the semantic weight, so it adds evidence without replacing the question's.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

FEEDBACK_BETA = 1.0  # weight of the seeds' centroid next to the (unit) query vector
STRATEGY = "feedback"


def feedback_vector(
    query: np.ndarray, seeds: Sequence[np.ndarray], beta: float = FEEDBACK_BETA
) -> np.ndarray | None:
    """The unit query vector plus `beta` x the unit centroid of the seeds' vectors, scaled to
    unit length; None without seeds (or when the sum vanishes)."""
    if not len(seeds):
        return None
    q = np.asarray(query, dtype=np.float32)
    centroid = np.mean(np.vstack([np.asarray(s, dtype=np.float32) for s in seeds]), axis=0)
    q_norm, c_norm = float(np.linalg.norm(q)), float(np.linalg.norm(centroid))
    if q_norm <= 1e-12 or c_norm <= 1e-12:
        return None
    moved = q / q_norm + beta * centroid / c_norm
    norm = float(np.linalg.norm(moved))
    return moved / norm if norm > 1e-12 else None
