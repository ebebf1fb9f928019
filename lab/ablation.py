"""The ablation runs of `manage.py evaluate --ablate`: reference configurations and the full
pipeline minus each stage in turn, all in one process over one loaded dataset."""

from __future__ import annotations

from apps.search.stages import STAGES

RERANKERS = ["context", "entity_boost", "coactivation", "boosts", "mmr", "diversity"]
# Stages past plain retrieval and reranking: the reference rows leave them out too, so they
# stay plain retrievers
EXTRAS = [
    "focus",
    "feedback",
    "session",
    "questions",
    "answers",
    "passages",
    "previous_turn",
    "time_answers",
]

# name -> (mode, disabled stages)
REFERENCE_RUNS: dict[str, tuple[str, list[str]]] = {
    "full": ("hybrid", []),
    "lexical only": ("hybrid", ["semantic", "graph", "exact", *RERANKERS, *EXTRAS]),
    "semantic only": ("semantic", [*RERANKERS, *EXTRAS]),
    "plain RRF (lexical+semantic, k=60)": (
        "hybrid",
        [
            "score_fusion",
            "adaptive_weights",
            "intent_profiles",
            "graph",
            "exact",
            *RERANKERS,
            *EXTRAS,
        ],
    ),
    "score fusion of lexical + semantic only (base weights 0.6 / 1.0)": (
        "hybrid",
        ["adaptive_weights", "intent_profiles", "graph", "exact", *RERANKERS, *EXTRAS],
    ),
}


def ablation_runs(mode: str = "hybrid") -> dict[str, tuple[str, list[str]]]:
    runs = dict(REFERENCE_RUNS)
    for stage in STAGES:
        if stage == "deep":
            continue
        runs[f"full - {stage}"] = (mode, [stage])
    runs["full, mode=deep"] = ("deep", [])
    return runs
