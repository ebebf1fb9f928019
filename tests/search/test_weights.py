"""Adaptive strategy weights (SPEC 4.2)."""

from __future__ import annotations

import pytest

from apps.search.config import search_settings
from apps.search.pipeline.weights import BASE_WEIGHTS, adapt_weights, apply_multipliers
from apps.search.types import QueryAnalysis


def test_base_weights():
    weights, enabled, rules = adapt_weights(
        QueryAnalysis(text="cache", keywords=("cache", "x", "y"))
    )
    assert weights == BASE_WEIGHTS == {"keyword": 0.6, "semantic": 1.0, "graph": 0.8, "exact": 1.0}
    assert enabled["graph"] is False and rules == []


def test_entity_switches_graph_on_and_boosts_keyword():
    analysis = QueryAnalysis(text="EntityStore locking rules", entities=("EntityStore",),
                             keywords=("entitystore", "locking", "rules"))  # fmt: skip
    weights, enabled, rules = adapt_weights(analysis)
    assert enabled["graph"] is True
    assert weights["keyword"] == pytest.approx(0.9)
    assert weights["graph"] == pytest.approx(1.04)
    assert rules == ["entity"]


def test_short_query_with_entity():
    analysis = QueryAnalysis(
        text="EntityStore", entities=("EntityStore",), keywords=("entitystore",)
    )
    weights, _, rules = adapt_weights(analysis)
    assert weights["keyword"] == pytest.approx(0.6 * 1.5 * 2)
    assert weights["semantic"] == pytest.approx(0.5)
    assert "short_entity" in rules


def test_question_form_favours_semantic_with_spec_multipliers(settings):
    settings.SEARCH_QUESTION_SEMANTIC, settings.SEARCH_QUESTION_KEYWORD = 1.5, 0.7
    config = search_settings()  # rebuilt from the overridden settings
    analysis = QueryAnalysis(
        text="how does caching work", is_question=True, keywords=("caching", "work", "more")
    )
    weights, _, _ = adapt_weights(
        analysis,
        question_semantic=config.question_semantic,
        question_keyword=config.question_keyword,
    )
    assert weights["semantic"] == pytest.approx(1.5)
    assert weights["keyword"] == pytest.approx(0.42)


def test_file_path_sets_keyword_3_semantic_02():
    analysis = QueryAnalysis(
        text="apps/search/services.py",
        entities=("apps/search/services.py",),
        file_paths=("apps/search/services.py",),
        keywords=("x", "y", "z"),
    )
    weights, _, _ = adapt_weights(analysis)
    assert weights["keyword"] == 3.0 and weights["semantic"] == 0.2


def test_learned_weights_multiply_in():
    assert apply_multipliers({"keyword": 0.6, "semantic": 1.0}, {"keyword": 1.8}) == {
        "keyword": pytest.approx(1.08),
        "semantic": 1.0,
    }


def test_question_rule_is_neutral_by_default():
    analysis = QueryAnalysis(
        text="how does caching work", is_question=True, keywords=("caching", "work", "more")
    )
    weights, _, rules = adapt_weights(analysis)
    assert weights == BASE_WEIGHTS and rules == ["question"]


def _asking(text: str, entities: tuple[str, ...], keywords: tuple[str, ...]) -> QueryAnalysis:
    """A question naming `entities`, of which only Melanie is a tag of the namespace."""
    return QueryAnalysis(text=text, entities=entities, tag_entities=("melanie",), keywords=keywords)


SPEAKER = _asking("What has Melanie painted?", ("Melanie",), ("melanie", "painted", "has"))


def test_a_tag_entity_does_not_lift_the_keyword_weight_by_default():
    """The entity boost already lifts the memories carrying the tag; an entity found only in
    text keeps SPEC's keyword x1.5."""
    weights, enabled, rules = adapt_weights(SPEAKER)
    assert weights["keyword"] == pytest.approx(0.6) and enabled["graph"] is True
    assert weights["graph"] == pytest.approx(1.04) and rules == ["entity"]
    both = _asking("Did Melanie visit Rome?", ("Melanie", "Rome"), ("melanie", "visit", "rome"))
    assert adapt_weights(both)[0]["keyword"] == pytest.approx(0.9)


def test_spec_lift_for_tag_entities_comes_back_with_the_setting(settings):
    settings.SEARCH_TAG_ENTITY_KEYWORD = 1.5
    config = search_settings()
    weights, _, _ = adapt_weights(SPEAKER, tag_entity_keyword=config.tag_entity_keyword)
    assert weights["keyword"] == pytest.approx(0.9)
