"""Fitting the learned reading of question kinds (apps/search/pipeline/question_kind.py).

Labelled questions: data/questions_fit.jsonl (written for fitting by an author who saw no other
set: why, what-followed and every other kind of question, many of the others sharing the causal
ones' words), the why- and effect questions of the why benchmark's collections that were
already scored (lab/why.py; every no-link question is a why-question too), and the LoCoMo dev
questions as the wording lists read them. A fresh why collection is never fitted on.

The causal regression separates why and what-followed questions from the rest; the effect
regression, fitted on the causal ones alone, tells the two apart. The causal threshold is the
lowest at which, over five cross-validation folds, at most OTHER_SHARE of the other questions
would take the why path.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold

from apps.search.pipeline import question_kind
from apps.search.pipeline.analyse import worded_direction
from lab import trust, why
from lab.trust_fit import matrix

FIT = Path(__file__).parent / "data" / "questions_fit.jsonl"
WHY_SPLITS = ("train", "heldout", "fresh", "fresh2", "fresh3", "fresh4", "fresh5")
C = 16.0
OTHER_SHARE = 0.02  # of ordinary questions that may take the why path by this reading
OTHER, CAUSE, EFFECT = "other", question_kind.CAUSE, question_kind.EFFECT


def labelled(why_splits: tuple[str, ...] = WHY_SPLITS) -> tuple[list[str], list[str]]:
    texts, labels = [], []
    for line in FIT.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            texts.append(row["text"])
            labels.append(row["label"])
    for row in why.read_set():
        if row["split"] not in why_splits:
            continue
        if row["kind"] == "nolink":
            texts.append(row["query"])
            labels.append(CAUSE)
            continue
        texts.append(row["why"]["query"])
        labels.append(CAUSE)
        if row.get("effect"):
            texts.append(row["effect"]["query"])
            labels.append(EFFECT)
    path = trust.LOCOMO / "queries.jsonl"
    for line in path.read_text(encoding="utf-8").splitlines():
        query = json.loads(line)["query"]
        texts.append(query)
        labels.append(worded_direction(query) or OTHER)
    return texts, labels


def _regression(x, y) -> LogisticRegression:
    model = LogisticRegression(
        C=C, solver="liblinear", class_weight="balanced", max_iter=1000, random_state=0
    )
    return model.fit(x, y)


def fit(texts: list[str], labels: list[str], threshold: float = 0.5) -> question_kind.QuestionKinds:
    x = matrix(texts)
    y = np.array(labels)
    causal = _regression(x, y != OTHER)
    asks = y != OTHER
    effect = _regression(x[asks], y[asks] == EFFECT)
    return question_kind.QuestionKinds(
        causal.coef_[0].astype(np.float16).astype(np.float32),
        float(causal.intercept_[0]),
        threshold,
        effect.coef_[0].astype(np.float16).astype(np.float32),
        float(effect.intercept_[0]),
    )


def cross_validate(texts: list[str], labels: list[str], folds: int = 5) -> list[tuple]:
    """(label, P(causal), P(effect | causal)) for each question, from a fit without its fold."""
    y = np.array(labels)
    out: list[tuple] = [None] * len(texts)  # type: ignore[list-item]
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=0)
    for train, test in splitter.split(texts, y):
        kinds = fit([texts[i] for i in train], [labels[i] for i in train])
        for i in test:
            out[i] = (labels[i], *kinds.probabilities(texts[i]))
    return out


def choose_threshold(scored: list[tuple]) -> float:
    others = np.sort([p for label, p, _ in scored if label == OTHER])
    allowed = int(len(others) * OTHER_SHARE)
    return round(float(others[len(others) - allowed - 1]) + 1e-4, 4)


def report(scored: list[tuple], threshold: float) -> dict[str, float]:
    """Shares at `threshold`: causal questions read as causal, in the right direction, and
    other questions read as causal."""
    causal = [(label, p, e) for label, p, e in scored if label != OTHER]
    found = [(label, e) for label, p, e in causal if p >= threshold]
    right = sum((e >= 0.5) == (label == EFFECT) for label, e in found)
    others = [p for label, p, _ in scored if label == OTHER]
    return {
        "causal found": len(found) / len(causal),
        "direction right": right / max(1, len(found)),
        "others taken": sum(p >= threshold for p in others) / len(others),
    }


def save(kinds: question_kind.QuestionKinds, path: Path = question_kind.WEIGHTS) -> None:
    np.savez_compressed(
        path,
        causal=kinds.causal.astype(np.float16),
        causal_bias=np.float64(kinds.causal_bias),
        threshold=np.float64(kinds.threshold),
        effect=kinds.effect.astype(np.float16),
        effect_bias=np.float64(kinds.effect_bias),
    )
