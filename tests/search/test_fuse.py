"""Fusion: weighted RRF with k = 60, score fusion, deep-mode convergence bonus."""

from __future__ import annotations

import numpy as np
import pytest

from apps.search.pipeline.fuse import (
    CONVERGENCE_BONUS,
    RRF_K,
    fuse_variants,
    minmax,
    score_fusion,
    weighted_rrf,
)


def test_rrf_uses_k_60_and_weights():
    fused = weighted_rrf({"keyword": {"a": 1, "b": 2}, "semantic": {"b": 1}},
                         {"keyword": 0.6, "semantic": 1.0})  # fmt: skip
    assert RRF_K == 60
    assert fused["a"] == pytest.approx(0.6 / 61)
    assert fused["b"] == pytest.approx(0.6 / 62 + 1.0 / 61)
    assert fused["b"] > fused["a"]


def test_rrf_weight_decides_between_first_places():
    fused = weighted_rrf({"keyword": {"a": 1}, "semantic": {"b": 1}},
                         {"keyword": 0.6, "semantic": 1.0})  # fmt: skip
    assert fused["b"] > fused["a"]


def test_convergence_bonus_for_results_found_by_several_variants():
    fused, found = fuse_variants([{"a": 0.9, "b": 0.5}, {"b": 0.8, "c": 0.1}])
    assert CONVERGENCE_BONUS == 0.10
    assert found == {"a": 1, "b": 2, "c": 1}
    # b: rank 2 then rank 1, scaled RRF, plus one bonus
    expected_b = ((RRF_K + 1) / (RRF_K + 2) + 1.0) / 2 + 0.10
    assert fused["b"] == pytest.approx(expected_b)
    assert fused["b"] > fused["a"] > fused["c"]


def test_minmax_and_score_fusion():
    assert minmax(np.array([2.0, 4.0])).tolist() == [0.0, 1.0]
    assert minmax(np.array([3.0])).tolist() == [1.0]
    assert minmax(np.array([0.0, 0.0])).tolist() == [0.0, 0.0]  # nothing matched: no lift
    # pool [a, b]: keyword found a, semantic b
    fused = score_fusion({"keyword": np.array([1.0, 0.0]), "semantic": np.array([0.0, 1.0])},
                         {"keyword": 0.6, "semantic": 1.0}, 2)  # fmt: skip
    assert fused[1] > fused[0]
    assert fused[0] == pytest.approx(0.6 / 1.6)
