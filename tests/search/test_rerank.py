"""Pure re-ranking stages: graph walk, similarity floor, MMR, diversity, confidence, budget."""

from __future__ import annotations

import numpy as np
import pytest

from apps.search.pipeline.budget import GAP_WARNING, estimate_tokens, render
from apps.search.pipeline.coactivate import coactivate, natural_key, temporal_neighbours
from apps.search.pipeline.confidence import evidence_gap, top_z_score
from apps.search.pipeline.graph import RELATION_MULTIPLIER, hop_factor, walk
from apps.search.pipeline.rerank import apply_boosts, decay_factor, diversify, mmr, mmr_lambda
from apps.search.pipeline.retrieve import apply_similarity_floor
from apps.search.types import Candidate


@pytest.mark.parametrize(
    ("relation", "factor"),
    [("supersedes", 1.5), ("caused", 1.3), ("contradicts", 0.8), ("relates_to", 1.0),
     ("depends_on", 1.0)],
)  # fmt: skip
def test_relation_multipliers(relation, factor):
    assert hop_factor(relation, 1.0) == pytest.approx(factor)
    assert hop_factor(relation, 0.5) == pytest.approx(factor * 0.5)
    assert RELATION_MULTIPLIER.get(relation, 1.0) == factor


def test_walk_depth_two_multiplies_per_hop():
    edges = [("s", "a", "caused", 1.0), ("a", "b", "supersedes", 0.5), ("b", "c", "caused", 1.0)]
    reached = walk({"s": 1.0}, edges)
    assert reached["a"] == pytest.approx(1.3)
    assert reached["b"] == pytest.approx(1.3 * 0.75)
    assert "c" not in reached  # three hops away


def test_similarity_floor_and_fallback():
    hits, fallback = apply_similarity_floor([("a", 0.5), ("b", 0.2)])
    assert [h.id for h in hits] == ["a"] and fallback is False
    hits, fallback = apply_similarity_floor([("a", 0.25), ("b", 0.18), ("c", 0.1)])
    assert [h.id for h in hits] == ["a", "b"] and fallback is True
    assert apply_similarity_floor([]) == ([], False)


@pytest.mark.parametrize(
    ("intent", "lam"),
    [("understand", 0.5), ("fix_bug", 0.85), ("lookup", 0.7), ("temporal", 0.7),
     ("explore", 0.7)],
)  # fmt: skip
def test_mmr_lambda_per_intent(intent, lam):
    assert mmr_lambda(intent) == lam


def _cand(key, score, vec, file_path=""):
    v = np.asarray(vec, dtype=np.float32)
    return Candidate(id=key, score=score, embedding=v / np.linalg.norm(v), file_path=file_path)


def test_mmr_pushes_a_near_duplicate_down():
    cands = [_cand("a", 1.0, [1, 0, 0]), _cand("a2", 0.95, [1, 0.01, 0]),
             _cand("b", 0.9, [0, 1, 0]), _cand("c", 0.1, [0, 0, 1])]  # fmt: skip
    assert [c.id for c in mmr(cands, 0.5)][:2] == ["a", "b"]
    assert [c.id for c in mmr(cands, 1.0)][:2] == ["a", "a2"]


@pytest.mark.parametrize(("cap", "kept"), [(0, 5), (1, 3), (2, 4), (3, 5)])
def test_per_file_cap_and_zero_is_off(cap, kept):
    cands = [_cand(str(i), 1 - i / 10, [1, 0, 0], "x.py") for i in range(3)]
    cands += [_cand("y", 0.5, [1, 0, 0], "y.py"), _cand("z", 0.4, [1, 0, 0])]
    assert len(diversify(cands, cap)) == kept


def test_gap_flag_when_nothing_stands_out():
    assert evidence_gap([0.50, 0.49, 0.48, 0.50, 0.47, 0.49])
    assert evidence_gap([])


def test_no_gap_flag_on_a_clear_winner():
    scores = [1.0] + [0.2, 0.21, 0.19, 0.2, 0.22, 0.18, 0.2, 0.21, 0.19]
    assert top_z_score(scores) > 1.5
    assert not evidence_gap(scores)


@pytest.mark.parametrize(
    ("scores", "gap"),
    [([1.0, 0.5, 0.4, 0.3], False), ([1.0, 0.9, 0.5, 0.4], True), ([1.0, 0.0], False)],
)
def test_gap_threshold_is_z_15(scores, gap):
    # z = (top - mean) / stdev: 1.62 and 1.30 for the first two; two values say nothing
    assert evidence_gap(scores) is gap


def test_decay_follows_stored_stability():
    # The tier scaling lives in the decay job's stability (tests/jobs/test_decay.py).
    assert decay_factor(1.0) == 1.0
    assert decay_factor(0.0) < decay_factor(0.5) < decay_factor(0.9) < 1.0
    assert decay_factor(0.0) == pytest.approx(0.8)


def test_pagerank_boost_is_relative_and_neutral_without_edges():
    flat = [
        Candidate(id="a", score=1.0, pagerank=0.01),
        Candidate(id="b", score=0.99, pagerank=0.01),
    ]
    apply_boosts(flat)
    assert flat[0].score > flat[1].score  # equal ranks: order kept
    ranked = [
        Candidate(id="a", score=1.0, pagerank=0.001),
        Candidate(id="b", score=0.99, pagerank=0.2),
    ]
    apply_boosts(ranked)
    assert ranked[1].score > ranked[0].score  # a central memory overtakes a near tie


def test_temporal_neighbours_keep_source_order_within_a_timestamp():
    from datetime import UTC, datetime, timedelta

    t = datetime(2024, 1, 1, tzinfo=UTC)
    rows = [("x10", t, "D1:10"), ("x2", t, "D1:2"), ("x1", t, "D1:1"),
            ("later", t + timedelta(days=3), "D2:1")]  # fmt: skip
    nbrs = temporal_neighbours(rows)
    assert nbrs["x2"] == ("x1", "x10")
    assert nbrs["x10"] == ("x2",)  # the next session is days away: not a neighbour
    assert natural_key("D1:2") < natural_key("D1:10")


def test_coactivation_spreads_from_top_hits_only():
    scores = {"a": 1.0, "b": 0.5, "n": 0.0, "m": 0.0}
    out, received = coactivate(scores, {"a": ("n",), "b": ("m",)}, {}, share=0.2, top=1)
    assert out["n"] == pytest.approx(0.2) and out["m"] == 0.0 and received == {"n"}


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


def test_gap_warning_comes_first_and_contradictions_are_marked():
    text = render(_payload(2, 10, gap=True), 2000)
    assert text.startswith(GAP_WARNING)
    assert "Contradiction" in text


def test_batch_written_memories_without_source_ids_are_not_neighbours():
    from datetime import UTC, datetime, timedelta

    t = datetime(2024, 1, 1, tzinfo=UTC)
    nbrs = temporal_neighbours(
        [("a", t, None), ("b", t, None), ("c", t + timedelta(minutes=5), None)]
    )
    assert nbrs["a"] == () or nbrs["a"] == ("c",)
    assert "a" not in nbrs["b"] and "b" not in nbrs["a"]
