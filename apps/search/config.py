"""SearchSettings: the search configuration, read from django settings in one place.

Defaults live in memoryhub/settings/base.py only; this module never repeats them. The object is
built once per process and rebuilt when a test overrides a setting (Django's `setting_changed`
signal). Callers that want another configuration for a run (`manage.py evaluate`, `bench`,
the ablation runs) pass their own SearchSettings to search() instead of changing settings.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Literal

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver

from .pipeline import confidence
from .stages import STAGES, unknown_stages

Fusion = Literal["score", "rrf", "weighted_sum"]
FUSIONS: tuple[str, ...] = ("score", "rrf", "weighted_sum")


@dataclass(frozen=True)
class SearchSettings:
    """Every knob the pipeline reads. `disabled` holds the stages switched off (the setting's
    and, after `for_request`, the request's); `fusion` is the one fusion choice: "score"
    (normalized scores), "rrf" (weighted reciprocal rank) or "weighted_sum" (SPEC's plain
    hybrid_vector_weight mode)."""

    disabled: frozenset[str]
    fusion: Fusion
    hybrid_vector_weight: float
    diversity_max_per_file: int
    coactivation_top: int
    question_semantic: float
    question_keyword: float
    tag_entity_keyword: float  # keyword lift when every entity the query names is a tag
    token_budget: int
    query_max_chars: int
    querylog_sync: bool
    evidence_rule: str  # "calibrated" (confidence < threshold) or "zscore" (top score's z < 1.5)
    confidence_threshold: float
    session_share: float  # session-level scoring; 0 = off
    feedback_share: float  # pseudo-relevance feedback, x the semantic weight; 0 = off
    exact_scan_max: int  # namespaces up to this many memories: exact vector scan, no HNSW
    hnsw_ef_search: int  # 0 = by namespace size (retrieve.EF_SEARCH_BY_SIZE)
    feedback_ef_search: int  # the feedback walk's; 0 = as hnsw_ef_search
    lexical_common_rows: int  # a term in more memories than this matches only with rarer ones
    lexical_row_budget: int  # keyword candidates: the memories scored, roughly (0 = all)

    def __post_init__(self) -> None:
        bad = unknown_stages(self.disabled)
        if bad:
            raise ValueError(f"unknown stage(s) {', '.join(bad)}; known: {', '.join(STAGES)}")
        if self.fusion not in FUSIONS:
            raise ValueError(f"fusion must be one of {', '.join(FUSIONS)}, not {self.fusion!r}")
        if self.evidence_rule not in confidence.RULES:
            rules = ", ".join(confidence.RULES)
            raise ValueError(f"evidence rule must be one of {rules}, not {self.evidence_rule!r}")

    @classmethod
    def from_django(cls) -> SearchSettings:
        return cls(
            disabled=frozenset(s.strip() for s in settings.SEARCH_DISABLED_STAGES if s.strip()),
            fusion=settings.SEARCH_FUSION,
            hybrid_vector_weight=float(settings.HYBRID_VECTOR_WEIGHT),
            diversity_max_per_file=int(settings.SEARCH_DIVERSITY_MAX_PER_FILE),
            coactivation_top=int(settings.SEARCH_COACTIVATION_TOP),
            question_semantic=float(settings.SEARCH_QUESTION_SEMANTIC),
            question_keyword=float(settings.SEARCH_QUESTION_KEYWORD),
            tag_entity_keyword=float(settings.SEARCH_TAG_ENTITY_KEYWORD),
            token_budget=int(settings.SEARCH_TOKEN_BUDGET),
            query_max_chars=int(settings.SEARCH_QUERY_MAX_CHARS),
            querylog_sync=bool(settings.SEARCH_QUERYLOG_SYNC),
            evidence_rule=settings.SEARCH_EVIDENCE_RULE,
            confidence_threshold=float(settings.SEARCH_CONFIDENCE_THRESHOLD),
            session_share=float(settings.SEARCH_SESSION_SHARE),
            feedback_share=float(settings.SEARCH_FEEDBACK_SHARE),
            exact_scan_max=int(settings.SEARCH_EXACT_SCAN_MAX),
            hnsw_ef_search=int(settings.SEARCH_HNSW_EF_SEARCH),
            feedback_ef_search=int(settings.SEARCH_FEEDBACK_EF_SEARCH),
            lexical_common_rows=int(settings.SEARCH_LEXICAL_COMMON_ROWS),
            lexical_row_budget=int(settings.SEARCH_LEXICAL_ROW_BUDGET),
        )

    def on(self, stage: str) -> bool:
        return stage not in self.disabled

    def without(self, stages: Iterable[str]) -> SearchSettings:
        """This configuration with more stages switched off (a request's disabled_stages)."""
        extra = frozenset(stages)
        return self if extra <= self.disabled else replace(self, disabled=self.disabled | extra)

    @property
    def fusion_used(self) -> Fusion:
        """The fusion that runs: switching the score_fusion stage off falls back to RRF."""
        if self.fusion == "score" and not self.on("score_fusion"):
            return "rrf"
        return self.fusion


@lru_cache(maxsize=1)
def search_settings() -> SearchSettings:
    """The process-wide configuration from django settings (built once)."""
    return SearchSettings.from_django()


@receiver(setting_changed)
def _rebuild(*, setting: str, **_: object) -> None:
    if setting.startswith("SEARCH_") or setting == "HYBRID_VECTOR_WEIGHT":
        search_settings.cache_clear()
