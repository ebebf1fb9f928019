"""Query analysis: entities, intents from embedding centroids, deep-mode variants."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from apps.search.pipeline.analyse import analyse_query, find_entities
from apps.search.pipeline.variants import MAX_VARIANTS, query_variants
from apps.vectors.embeddings import embed_query, model_name

NOW = datetime(2024, 5, 15, tzinfo=UTC)


def test_entities_identifiers_paths_quotes_and_known_tags():
    found = find_entities(
        'Why does EntityStore in apps/store/entity_store.py log "stale cache" for melanie?',
        known_tags=["melanie", "ops", "db"],
    )
    assert "EntityStore" in found["identifiers"]
    assert "apps/store/entity_store.py" in found["paths"]
    assert found["phrases"] == ("stale cache",)
    assert found["tags"] == ("melanie",)


@pytest.mark.parametrize(
    ("query", "phrases"),
    [
        ("When is Melanie's daughter's birthday?", ()),
        ("What are Melanie's pets' names?", ()),
        ("Who wrote the 'staging freeze' note in Dana's wiki?", ("staging freeze",)),
        ("Where did 'ops' and 'db' move?", ("ops", "db")),
    ],
)
def test_apostrophes_inside_words_quote_nothing(query, phrases):
    """A single quote opens or closes a phrase only at a word's edge: possessives are not
    quotes (read as one, "Melanie's daughter's" made "s daughter" a phrase to match
    verbatim)."""
    assert find_entities(query, known_tags=[])["phrases"] == phrases


@pytest.mark.parametrize(
    ("query", "intent"),
    [
        ("when did we move the servers to the new data center", "temporal"),
        ("the app crashes with a null pointer error after login, how do I fix it", "fix_bug"),
        ("explain how the authentication flow works", "understand"),
        ("what caused the outage in the billing module", "relation"),
    ],
)
def test_intent_from_embedding_centroids(embedding_model, query, intent):
    analysis = analyse_query(query, vector=embed_query(query), model_name=model_name(), now=NOW)
    assert analysis.intent == intent
    assert set(analysis.intent_scores) >= {"lookup", "fix_bug", "temporal", "understand"}


def test_time_phrase_in_query_becomes_a_range(embedding_model):
    query = "what did we decide last week about caching"
    analysis = analyse_query(query, vector=embed_query(query), model_name=model_name(), now=NOW)
    assert analysis.time_phrase == "last week"
    assert analysis.after == datetime(2024, 5, 6, tzinfo=UTC)
    assert analysis.before == datetime(2024, 5, 13, tzinfo=UTC)


def test_variants_keep_the_original_first_and_at_most_three():
    variants = query_variants("EntityStore crash bug on save")
    assert variants[0] == "EntityStore crash bug on save"
    assert len(variants) <= MAX_VARIANTS == 3
    assert "entity store crash bug on save" in variants
    assert query_variants("plain words only") == ["plain words only"]
