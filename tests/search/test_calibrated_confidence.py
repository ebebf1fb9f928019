"""The calibrated confidence, gated co-activation and session scoring (pure, no database)."""

from __future__ import annotations

import pytest

from apps.search.pipeline.coactivate import coactivate
from apps.search.pipeline.confidence import Signals, estimate, judge, measure
from apps.search.pipeline.session import session_lift
from apps.search.types import Evidence, Ranked


def cand(key, score, similarity=0.5, lexical=1.0):
    return Ranked(id=key, score=score, evidence=Evidence(lexical=lexical, similarity=similarity))


def test_signals_of_a_clear_answer():
    ordered = [cand("a", 1.0, 0.7, 3.0), cand("b", 0.3, 0.4, 0.5), cand("c", 0.2, 0.3, 0.2)]
    lists = {"keyword": [("a", 3.0), ("b", 0.5)], "semantic": [("a", 0.7), ("b", 0.4)]}
    s = measure(ordered, lists, query_idf=3.0, missing_idf=0.0)
    assert s.top_cosine == 0.7 and s.coverage == 1.0 and s.missing == 0.0
    assert s.agreement == 1.0 and s.margin == pytest.approx(0.7)


def test_terms_the_namespace_lacks_lower_the_confidence():
    ordered = [cand("a", 1.0, 0.45, 1.0), cand("b", 0.9, 0.44, 1.0), cand("c", 0.8, 0.4, 1.0)]
    lists = {"keyword": [("a", 1.0)], "semantic": [("a", 0.45)]}
    known = measure(ordered, lists, query_idf=1.0, missing_idf=0.0)
    unknown = measure(ordered, lists, query_idf=4.0, missing_idf=3.0)
    assert unknown.missing == 0.75
    assert estimate(unknown) < estimate(known)


def test_judge_flags_nothing_found_and_below_the_floor():
    assert judge([], {}, fallback=False, best_similarity=0.0).evidence_gap
    weak = [cand("a", 1.0, 0.2, 0.0)]
    verdict = judge(weak, {"semantic": [("a", 0.2)]}, fallback=True, best_similarity=0.2)
    assert verdict.evidence_gap and 0.0 <= verdict.confidence <= 1.0


@pytest.mark.parametrize("rule", ["calibrated", "zscore"])
def test_both_rules_give_a_confidence(rule):
    ordered = [cand(str(i), s) for i, s in enumerate([0.5, 0.5, 0.49, 0.49, 0.48, 0.47])]
    lists = {"keyword": [(c.id, 1.0) for c in ordered]}
    verdict = judge(ordered, lists, fallback=False, best_similarity=0.5, query_idf=1.0,
                    rule=rule)  # fmt: skip
    assert 0.0 <= verdict.confidence <= 1.0
    if rule == "zscore":
        assert verdict.evidence_gap  # flat scores: nothing stands out


def test_estimate_is_monotone_in_cosine():
    low, high = Signals(top_cosine=0.2, coverage=0.5), Signals(top_cosine=0.7, coverage=0.5)
    assert estimate(high) > estimate(low)


def test_coactivation_skips_memories_without_own_evidence():
    scores = {"top": 1.0, "related": 0.4, "unrelated": 0.0}
    temporal = {"top": ("related", "unrelated")}
    out, received = coactivate(scores, temporal, {}, eligible={"top", "related"})
    assert received == {"related"} and out["unrelated"] == 0.0


def test_session_lift_prefers_sessions_with_several_matches():
    scores = {"a1": 0.6, "a2": 0.5, "b1": 0.6}
    sessions = {"a1": "A", "a2": "A", "b1": "B"}
    out = session_lift(scores, sessions, share=0.2)
    assert out["a1"] > out["b1"]


def test_session_lift_keeps_the_order_without_sessions():
    scores = {"a": 0.9, "b": 0.5, "c": 0.1}
    out = session_lift(scores, {}, share=0.2)
    assert sorted(out, key=out.get, reverse=True) == ["a", "b", "c"]
