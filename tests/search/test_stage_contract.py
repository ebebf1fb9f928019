"""The orchestration contract: per-request switches reach every stage (the budget included),
a passed SearchSettings replaces the settings for one call, and the explain view says what
each stage did to each result."""

from __future__ import annotations

from dataclasses import replace

import pytest

from apps.search.config import SearchSettings, search_settings
from apps.search.services import render_markdown, search

LONG = "Long note about caching layers and their eviction policy. " * 30


@pytest.fixture
def long_notes(remember):
    return remember([f"{LONG} ({i})" for i in range(8)])


def test_budget_cuts_the_text_by_default(long_notes):
    response = search(namespace="test-ns", query="caching eviction policy", limit=8)
    text = render_markdown(response)
    assert "left out to stay within 2000 tokens" in text


def test_disabling_the_budget_stage_per_request_reaches_the_text(long_notes):
    response = search(
        namespace="test-ns", query="caching eviction policy", limit=8, disabled_stages=["budget"]
    )
    text = render_markdown(response)
    assert "left out" not in text
    assert text.count("eviction policy.") == 30 * 8


def test_a_request_budget_wins_over_the_setting(long_notes):
    response = search(namespace="test-ns", query="caching eviction policy", token_budget=900)
    assert "within 900 tokens" in render_markdown(response)


def test_passed_configuration_replaces_the_settings_for_one_call(long_notes, settings):
    unlimited = search_settings().without(["budget"])
    response = search(namespace="test-ns", query="caching eviction policy", config=unlimited)
    assert "left out" not in render_markdown(response)
    assert "budget" not in search_settings().disabled  # nothing global changed


def test_settings_are_read_once_and_follow_overrides(settings):
    first = search_settings()
    assert search_settings() is first
    settings.SEARCH_DIVERSITY_MAX_PER_FILE = 1
    assert search_settings().diversity_max_per_file == 1


def test_turning_off_score_fusion_means_rrf():
    config = replace(search_settings(), fusion="score")
    assert config.fusion_used == "score"
    assert config.without(["score_fusion"]).fusion_used == "rrf"


@pytest.mark.parametrize(("field", "value"), [("disabled", frozenset({"nope"})), ("fusion", "x")])
def test_bad_configuration_is_refused(field, value):
    with pytest.raises(ValueError, match=field if field == "fusion" else "unknown stage"):
        SearchSettings(**{**search_settings().__dict__, field: value})


def test_explain_view_shows_each_results_path(remember):
    remember(
        [
            {"content": f"Cache eviction note number {i} about the LRU policy.",
             "file_path": "docs/cache.md", "tags": ["cache"]}
            for i in range(6)
        ]
        + ["The LRU cache eviction policy drops the least recently used entry."]
    )  # fmt: skip
    response = search(namespace="test-ns", query="cache eviction policy", include_debug=True)
    debug = response.debug
    assert {"intent", "entities", "weights", "adapted_weights", "learned_weights"} <= set(debug)
    for stage in ("lexical", "semantic", "order", "diversity", "mmr"):
        assert stage in debug["stage_timings_ms"]
    results = {r["id"]: r for r in debug["results"]}
    assert list(results) == [m["id"] for m in response.memories]
    first = debug["results"][0]
    assert first["score"] == response.memories[0]["score"]
    assert set(first["positions"]) == {"fused", "order", "diversity", "mmr"}
    assert first["ranks"] and "semantic" in first["scores"]
    # at most 3 of the 6 notes from docs/cache.md survive diversity: the others are moves
    dropped = [m for m in debug["moves"]["diversity"] if m["to"] is None]
    assert len(dropped) == 3
    assert sum(1 for m in response.memories if m["file_path"] == "docs/cache.md") == 3
    assert all(isinstance(b, list) and len(b) == 2 for r in debug["results"] for b in r["boosts"])
