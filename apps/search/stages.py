"""Names of the pipeline stages that can be switched off (settings.SEARCH_DISABLED_STAGES, the
`disabled_stages` argument of search(), `manage.py evaluate --disable`)."""

from __future__ import annotations

from collections.abc import Iterable

STAGES: tuple[str, ...] = (
    "analyse",  # intent from embedding centroids, entities, time expressions in the query
    "adaptive_weights",  # per-query weight rules (entity, short query, question, file path)
    "learned_weights",  # StrategyWeights rows written from feedback
    "intent_profiles",  # per-intent weight profiles
    "lexical",  # full-text retrieval (IDF-weighted, title/tag hits beat body hits)
    "wordforms",  # lexical also matches word forms the stemmer does not join (bought / buy)
    "semantic",  # pgvector cosine retrieval
    "passages",  # a memory's semantic score is its own cosine or its best sentence's
    "previous_turn",  # a dialog turn also read after the turn before it (needs passages)
    "focus",  # the semantic query without the tag names it mentions (entity boost has them)
    "feedback",  # pseudo-relevance feedback: the query moved towards the first hits' vectors
    "successors",  # a superseded memory that matches brings its current successor
    "graph",  # walk over causal edges from the seed hits
    "exact",  # substring / phrase match
    "score_fusion",  # fuse normalized scores; off = weighted RRF (k=60) over ranks
    "context",  # dialog context: a candidate's scores borrow from its temporal neighbours
    "questions",  # a memory that is a question (ends with "?") counts 0.8 of its score
    "answers",  # the turn after a question gains what the question lost (needs "questions")
    "entity_boost",  # memories tagged with an entity the query names rank higher
    "deep",  # query variants in mode=deep (off: deep behaves like hybrid)
    "coactivation",  # top hits spread score to graph and temporal neighbours
    "session",  # memories of the sessions that match best rank higher
    "boosts",  # quality, decay (stability per tier), pagerank
    "time_answers",  # a "when" question: memories that mention a time rank higher
    "learned_rank",  # the boosted order's head re-ordered by a fitted model of the signals
    "diversity",  # at most N results per file
    "mmr",  # maximal marginal relevance, lambda per intent
    "why",  # why / effect questions: the matches' causal chain, its memories brought to the top
    "confidence",  # evidence-gap flag
    "contradictions",  # contradiction flags
    "budget",  # token budget of the assistant-facing text
)


def unknown_stages(names: Iterable[str]) -> list[str]:
    return sorted(set(names) - set(STAGES))
