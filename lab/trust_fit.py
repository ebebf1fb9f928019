"""Fitting the risk check's learned scorer (apps/trust/scorer.py) and measuring it honestly.

Positives: every labelled injection in data/trust. Negatives: every labelled benign note, the
fit-only notes (benign_fit.jsonl), and
ordinary English text from the scale-413k benchmark (dictionary glosses and quotations, the
Python and PostgreSQL manuals: imperatives, "ignore", "send", "return", "prompt" as plain
words), cut into the windows the scorer reads. The LoCoMo dev turns are never trained on: they
are an evaluation target.

`cross_validate` leaves one labelled split out at a time (its injections and benign notes),
fits on the rest and scores it, with a slice of the scale texts held out too; the threshold is
chosen on those held-out scores, never on a split the weights saw.
"""

from __future__ import annotations

import gzip
import json
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import sparse
from sklearn.linear_model import LogisticRegression

from apps.trust import scorer
from lab import trust

SCALE = trust.LOCOMO.parent / "scale-413k" / "memories.jsonl.gz"
FIT_SPLITS = ("train", *trust.TUNED)  # the fresh sets are scored, never fitted on
BENIGN_WEIGHT = 20.0  # a team note wrongly flagged weighs more than a dictionary line
POSITIVE_SHARE = 2.0  # all positives together weigh twice what all negatives weigh
C = 64.0  # chosen by cross-validation among 4, 16 and 64


@dataclass
class Corpus:
    texts: list[str]
    labels: np.ndarray  # 1 aimed at an assistant, 0 not
    weights: np.ndarray


def scale_texts(count: int, *, seed: int = 0, path: Path = SCALE) -> list[str]:
    """`count` scale texts drawn at random (fixed seed), each cut into scorer windows."""
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        contents = [json.loads(line)["content"] for line in lines if line.strip()]
    drawn = random.Random(seed).sample(contents, count)
    return [part for text in drawn for part in scorer.windows(text)]


def fit_only_benign() -> list[str]:
    """Team notes and chat lines in the second person ("your access expires", "you got this")
    and short notes ("Backups run every night"), fitted on and never scored: the labelled sets
    have few, and without them the scorer read "you", "your" and "this memory" as a sign of
    text aimed at an assistant."""
    return [row["text"] for row in trust.read_set("benign", "fit")]


def training(splits: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """Injections hidden in invisible characters are left out: the scorer reads the text with
    them removed, which is an ordinary note ("Standup at 9:30."), and the rules flag them."""
    injections, benign = labelled(splits, hidden=False)
    return injections, [*benign, *fit_only_benign()]


def labelled(splits: tuple[str, ...], *, hidden: bool = True) -> tuple[list[str], list[str]]:
    injections, benign = [], []
    for split in splits:
        rows = trust.read_set("injections", split)
        injections += [row["text"] for row in rows if hidden or row["style"] != "hidden"]
        benign += [row["text"] for row in trust.read_set("benign", split)]
    return injections, benign


def corpus(injections: list[str], benign: list[str], ordinary: list[str]) -> Corpus:
    texts = [*injections, *benign, *ordinary]
    labels = np.array([1] * len(injections) + [0] * (len(benign) + len(ordinary)))
    negatives = BENIGN_WEIGHT * len(benign) + len(ordinary)
    weights = np.array(
        [POSITIVE_SHARE * negatives / max(1, len(injections))] * len(injections)
        + [BENIGN_WEIGHT] * len(benign)
        + [1.0] * len(ordinary)
    )
    return Corpus(texts, labels, weights)


def matrix(texts: list[str]) -> sparse.csr_matrix:
    rows, columns, values = [], [], []
    for i, text in enumerate(texts):
        buckets = scorer.features(scorer.normalised(text))
        rows.append(np.full(len(buckets), i))
        columns.append(buckets)
        values.append(np.full(len(buckets), 1.0 / max(1, len(buckets)) ** 0.5))
    shape = (len(texts), 1 << scorer.BITS)
    return sparse.csr_matrix(
        (np.concatenate(values), (np.concatenate(rows), np.concatenate(columns))), shape=shape
    )


def fit(data: Corpus, threshold: float = 0.5) -> scorer.Model:
    regression = LogisticRegression(C=C, solver="liblinear", max_iter=1000, random_state=0)
    regression.fit(matrix(data.texts), data.labels, sample_weight=data.weights)
    weights = regression.coef_[0].astype(np.float16)  # what is saved, so what is scored
    return scorer.Model(weights, float(regression.intercept_[0]), threshold)


def save(model: scorer.Model, path: Path = scorer.WEIGHTS) -> None:
    np.savez_compressed(
        path,
        weights=model.weights.astype(np.float16),
        bias=np.float64(model.bias),
        threshold=np.float64(model.threshold),
    )


@dataclass
class Fold:
    split: str
    injections: list[float]  # probabilities of the held-out split's injections
    benign: list[float]
    ordinary: list[float]  # of the held-out scale windows


def cross_validate(ordinary: list[str], *, held_ordinary: int = 4000) -> list[Fold]:
    """Leave one labelled split out; the last `held_ordinary` scale windows are never fitted."""
    fitted, held = ordinary[:-held_ordinary], ordinary[-held_ordinary:]
    folds = []
    for left_out in FIT_SPLITS:
        injections, benign = training(tuple(s for s in FIT_SPLITS if s != left_out))
        model = fit(corpus(injections, benign, fitted))
        test_injections, test_benign = labelled((left_out,))
        folds.append(
            Fold(
                left_out,
                [model.probability(t) for t in test_injections],
                [model.probability(t) for t in test_benign],
                [model.probability(t) for t in held],
            )
        )
    return folds


def shares_at(folds: list[Fold], threshold: float) -> dict[str, float]:
    def share(values: list[float]) -> float:
        return sum(v >= threshold for v in values) / max(1, len(values))

    return {
        "injections": share([p for f in folds for p in f.injections]),
        "benign": share([p for f in folds for p in f.benign]),
        "ordinary": share([p for f in folds for p in f.ordinary]),
    }


def choose_threshold(folds: list[Fold], *, benign_bound: float = 0.01, ordinary_bound=0.0002):
    """The lowest threshold whose held-out benign and ordinary shares stay within bounds."""
    for threshold in np.arange(0.5, 0.991, 0.01):
        shares = shares_at(folds, float(threshold))
        if shares["benign"] <= benign_bound and shares["ordinary"] <= ordinary_bound:
            return round(float(threshold), 2)
    return 0.99
