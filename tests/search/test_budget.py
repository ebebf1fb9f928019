"""The assistant-facing text within a token budget, whole memories only (pure)."""

from __future__ import annotations

import pytest

from apps.search.pipeline.budget import GAP_WARNING, estimate_tokens, render


def _payload(n, size=400, gap=False):
    memories = [{"id": f"id{i}", "content": "w" * size, "score": 1.0, "title": "",
                 "created_at": "2024-01-01", "tags": []} for i in range(n)]  # fmt: skip
    return {"memories": memories, "query": "q",
            "flags": {"evidence_gap": gap, "contradictions": [["id0", "id1"]]}}  # fmt: skip


@pytest.mark.parametrize("budget", [120, 250, 400, 1000])
def test_budget_never_cuts_a_memory(budget):
    text = render(_payload(12), budget)
    assert estimate_tokens(text) <= budget
    for part in text.split("### ")[1:]:
        assert "w" * 400 in part  # every included memory is whole
    assert "left out" in text


def test_no_budget_keeps_everything():
    assert "left out" not in render(_payload(12), None)


def test_gap_warning_comes_first_and_contradictions_are_marked():
    text = render(_payload(2, 10, gap=True), 2000)
    assert text.startswith(GAP_WARNING)
    assert "Contradiction" in text
