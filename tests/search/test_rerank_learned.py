"""The learned re-ranker (pure): the head re-ordered by a linear model of the signals the
stages computed, the scores handed back in the new order; fitting recovers a signal."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest

from apps.search.pipeline import rerank_learned
from apps.search.pipeline.rerank_learned import FEATURES, Model, features, rerank
from apps.search.types import Evidence, QueryAnalysis
from lab import rankfit
from tests.factories import ranked

ANALYSIS = QueryAnalysis(text="what did Jon buy")
WHEN = datetime(2023, 5, 8, tzinfo=UTC)


def _head():
    # b matches the words (lexical) but a has the better cosine and the better boosted score
    return [
        ranked("a", 1.0, evidence=Evidence(lexical=0.0, similarity=0.6), created_at=WHEN),
        ranked("b", 0.8, evidence=Evidence(lexical=0.3, similarity=0.4), ranks={"keyword": 1},
               created_at=WHEN),
        ranked("c", 0.5, evidence=Evidence(lexical=0.0, similarity=0.3), created_at=WHEN),
    ]  # fmt: skip


def _model(feature: str, weight: float) -> Model:
    coef = np.zeros(len(FEATURES))
    coef[FEATURES.index(feature)] = weight
    return Model(coef=coef, mean=np.zeros(len(FEATURES)), scale=np.ones(len(FEATURES)))


def test_features_have_one_row_per_item_and_read_the_signals():
    x = features(_head(), ANALYSIS, {})
    assert x.shape == (3, len(FEATURES))
    column = {name: x[:, i] for i, name in enumerate(FEATURES)}
    assert list(column["lexical_hit"]) == [0.0, 1.0, 0.0]
    assert column["similarity_gap"][0] == 0.0 and column["similarity_gap"][2] < 0
    assert column["keyword_rank"][1] < column["keyword_rank"][0]  # retrieved beats missing


def test_a_model_that_values_word_matches_moves_them_up_and_keeps_the_scores():
    out = rerank(_head(), analysis=ANALYSIS, temporal={}, model=_model("lexical", 1.0))
    assert [r.id for r in out] == ["b", "a", "c"]
    assert [r.score for r in out] == [1.0, 0.8, 0.5]
    assert "learned_rank" in out[0].reasons


def test_without_weights_the_order_is_unchanged(monkeypatch, tmp_path):
    monkeypatch.setattr(rerank_learned, "WEIGHTS_FILE", tmp_path / "absent.json")
    rerank_learned.load.cache_clear()
    items = _head()
    assert rerank(items, analysis=ANALYSIS, temporal={}, model=None) == items
    rerank_learned.load.cache_clear()


def test_only_the_head_moves():
    items = _head() + [ranked(f"t{i}", 0.1 - i / 100) for i in range(3)]
    model = Model(
        coef=_model("lexical", 1.0).coef, mean=np.zeros(len(FEATURES)),
        scale=np.ones(len(FEATURES)), head=3,
    )  # fmt: skip
    out = rerank(items, analysis=ANALYSIS, temporal={}, model=model)
    assert [r.id for r in out][3:] == ["t0", "t1", "t2"]


def test_weights_fitted_on_other_features_are_refused():
    data = _model("lexical", 1.0).as_dict() | {"features": ["something", "else"]}
    with pytest.raises(ValueError, match="refit"):
        Model.from_dict(data)


def test_fitting_learns_the_signal_that_marks_the_evidence():
    rng = np.random.default_rng(7)
    signal = FEATURES.index("lexical")
    samples = []
    for q in range(60):
        x = rng.normal(size=(20, len(FEATURES)))
        answer = int(np.argmax(x[:, signal]))
        ids = [f"{q}:{i}" for i in range(20)]
        samples.append(rankfit.Sample("ns", "single-hop", "q", {ids[answer]}, ids, x))
    model = rankfit.fit(samples[:40], l2=0.01)
    assert int(np.argmax(np.abs(model.coef))) == signal
    held_out = rankfit.judge(samples[40:], model)["overall"]
    assert held_out["recall@10"] == 1.0
    assert rankfit.judge(samples[40:], None)["overall"]["recall@10"] < 1.0
