"""Hooks the write path calls (inside transaction.on_commit) when data that background jobs
derive from has changed. The jobs app decides what to queue and debounces it."""

from __future__ import annotations


def graph_changed(namespace_id: int) -> None:
    """Causal edges of a namespace were added, changed or removed (PageRank is stale)."""


def feedback_recorded(namespace_id: int) -> None:
    """New search feedback in a namespace (learned strategy weights may be stale)."""
