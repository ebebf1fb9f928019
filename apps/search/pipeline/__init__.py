"""The search pipeline stages (SPEC section 4), one module per stage. search() in
apps/search/services.py composes them."""

from .budget import render
from .confidence import evidence_gap, top_z_score
from .fuse import fuse_variants, minmax, score_fusion, weighted_rrf
from .graph import walk
from .rerank import apply_boosts, diversify, entity_boost, mmr, mmr_lambda
from .retrieve import apply_similarity_floor
from .timeexpr import find_time_phrase, parse_time_expression

__all__ = [
    "apply_boosts", "apply_similarity_floor", "diversify", "entity_boost", "evidence_gap",
    "find_time_phrase", "fuse_variants", "minmax", "mmr", "mmr_lambda", "parse_time_expression",
    "render", "score_fusion", "top_z_score", "walk", "weighted_rrf",
]  # fmt: skip
