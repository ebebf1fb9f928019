"""Stage 3's public face: the retrieval reads, one module per job (lexical, semantic, exact,
rows, neighbours, stats). Callers outside the pipeline (tests, tooling) import them from here."""

from .reads.exact import exact_search
from .reads.lexical import LexicalPlan, lexical_plan, lexical_search
from .reads.neighbours import PROBE_SETTINGS, window_query, window_rows
from .reads.rows import (
    browse,
    fetch_embeddings,
    fetch_rows,
    in_scope,
    mention_times,
    with_embeddings,
)
from .reads.semantic import (
    PASSAGE_COSINE,
    SEMANTIC_FALLBACK_MIN,
    SEMANTIC_MIN,
    SENTENCE_COSINE,
    apply_similarity_floor,
    ef_search_for,
    exact_nearest,
    hnsw_nearest,
    semantic_search,
)
from .reads.stats import namespace_size, namespace_tags
from .scope import MEMORY

__all__ = [
    "MEMORY",
    "PASSAGE_COSINE",
    "PROBE_SETTINGS",
    "SEMANTIC_FALLBACK_MIN",
    "SEMANTIC_MIN",
    "SENTENCE_COSINE",
    "LexicalPlan",
    "apply_similarity_floor",
    "browse",
    "ef_search_for",
    "exact_nearest",
    "exact_search",
    "fetch_embeddings",
    "fetch_rows",
    "hnsw_nearest",
    "in_scope",
    "lexical_plan",
    "lexical_search",
    "mention_times",
    "namespace_size",
    "namespace_tags",
    "semantic_search",
    "window_query",
    "window_rows",
    "with_embeddings",
]
