"""Scoring the trust checks (tooling, never imported by runtime code).

Data: data/trust/*.jsonl (see data/trust/README.md): the train sets, written before any rule
was tuned, and the held-out sets, written after them. heldout2, heldout3 and heldout4
(injections and benign notes only) were each written after the previous held-out set had been
scored and its misses used to widen the rules, so a set's first score is its clean measure.
heldout5 and heldout6 were written in wording the others lack, scored once each, and then
fitted on with the wide sets; heldout7 and heldout8 were each fresh until the next was
written, then fitted on (heldout8's misses also widened the rules); heldout9 is the fresh one.

Per split: injections flagged by `risk.assess`, benign notes flagged, credentials refused by
`secrets.find_secrets`, look-alikes refused. And every turn of the LoCoMo dev set, which is
ordinary conversation: the share that the risk check flags and the secrets check refuses, with
each check's cost per text.

No database: the checks are functions over text, and the risk check's scorer also reads the
text's sentence embedding, as the write path hands it over (encoded once and kept under var/
by lab/trust_vectors.py).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from apps.trust import risk, secrets

DATA = Path(__file__).parent / "data" / "trust"
LOCOMO = Path(__file__).resolve().parents[1].parent / "shared/benchmarks/locomo-dev"
# Held-out sets scored once when fresh and then fitted on (heldout..heldout4 also widened the
# rules); the fresh one nothing was tuned on and the scorer never fits.
TUNED = (
    "heldout",
    "heldout2",
    "heldout3",
    "heldout4",
    "heldout5",
    "heldout6",
    "heldout7",
    "heldout8",
)
FRESH = ("heldout9",)
HELDOUT = (*TUNED, *FRESH)
# Written for variety (other carriers, languages and disguises, subtle persuasion; wide4: the
# hard cases and their closest legitimate look-alikes) by four authors who saw no other set;
# fitted on and scored with the train set.
WIDE = ("wide1", "wide2", "wide3", "wide4")
SPLITS = ("train", *WIDE, *HELDOUT)

# name: (file stem, check, flagged is right)
SETS: dict[str, tuple[str, str, bool]] = {
    "injections flagged": ("injections", "risk", True),
    "benign flagged": ("benign", "risk", False),
    "secrets refused": ("secrets", "secrets", True),
    "look-alikes refused": ("lookalikes", "secrets", False),
}
# name: (comparison, bound) -- the targets every split must meet.
TARGETS: dict[str, tuple[str, float]] = {
    "injections flagged": (">=", 0.90),
    "benign flagged": ("<=", 0.03),
    "secrets refused": (">=", 0.90),
    "look-alikes refused": ("<=", 0.0),
    "LoCoMo turns flagged": ("<=", 0.01),
    "LoCoMo turns refused": ("<=", 0.0),
}


@dataclass
class Score:
    name: str
    flagged: int
    total: int
    misses: list[dict] = field(default_factory=list)  # the rows scored wrong, with the findings

    @property
    def share(self) -> float:
        return self.flagged / self.total if self.total else 0.0

    @property
    def meets_target(self) -> bool:
        comparison, bound = TARGETS[self.name]
        return self.share >= bound if comparison == ">=" else self.share <= bound + 1e-12


def read_set(stem: str, split: str, directory: Path = DATA) -> list[dict]:
    lines = (directory / f"{stem}_{split}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def findings(check: str, text: str, vector: np.ndarray | None = None) -> list:
    return risk.assess(text, embedding=vector) if check == "risk" else secrets.find_secrets(text)


def vectors_of(texts: list[str]) -> list[np.ndarray]:
    from lab.trust_vectors import Vectors  # the encoder loads only when the vectors are read

    return list(Vectors().of(texts))


def _described(found: list, text: str) -> list[str]:
    return [f"{f.kind} {text[f.start : f.end]!r}"[:120] for f in found]


def score_split(split: str) -> list[Score]:
    scores = []
    for name, (stem, check, should_flag) in SETS.items():
        if not (DATA / f"{stem}_{split}.jsonl").exists():
            continue
        rows = read_set(stem, split)
        score = Score(name, 0, len(rows))
        vectors = vectors_of([r["text"] for r in rows]) if check == "risk" else [None] * len(rows)
        for row, vector in zip(rows, vectors, strict=True):
            found = findings(check, row["text"], vector)
            score.flagged += bool(found)
            if bool(found) != should_flag:
                score.misses.append({**row, "found": _described(found, row["text"])})
        scores.append(score)
    return scores


def locomo_turns(directory: Path = LOCOMO) -> list[str]:
    lines = (directory / "memories.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["content"] for line in lines if line.strip()]


def score_locomo(turns: list[str]) -> list[Score]:
    """Every turn should pass both checks: it is people talking, not text aimed at a model."""
    scores, vectors = [], vectors_of(turns)
    for name, check in (("LoCoMo turns flagged", "risk"), ("LoCoMo turns refused", "secrets")):
        score = Score(name, 0, len(turns))
        for text, vector in zip(turns, vectors, strict=True):
            found = findings(check, text, vector)
            if found:
                score.flagged += 1
                score.misses.append({"text": text, "found": _described(found, text)})
        scores.append(score)
    return scores


def microseconds_per_text(check: Callable[[str], list], texts: list[str], rounds: int = 5) -> float:
    """The best of `rounds` passes over `texts`, per text: what one write pays (CPU time, so
    other work on a shared machine does not count)."""
    best = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        for text in texts:
            check(text)
        best = min(best, time.process_time() - started)
    return best / len(texts) * 1e6
