"""Fitting the risk check's learned scorer (apps/trust/scorer.py) and measuring it honestly.

Positives: every labelled injection in data/trust. Negatives: every labelled benign note, the
fit-only notes (benign_fit.jsonl), and
ordinary English text from the scale-413k benchmark (dictionary glosses and quotations, the
Python and PostgreSQL manuals: imperatives, "ignore", "send", "return", "prompt" as plain
words), cut into the windows the scorer reads. The LoCoMo dev turns are never trained on: they
are an evaluation target.

Two parts, fitted apart on the same texts and read together by adding their log-odds: the
wording (hashed n-grams, every scale window) and the meaning (the sentence embedding; the scale
windows it fits on are the 10,000 encoded once, lab/trust_vectors.py). One regression over both
was measured and generalised worse: it could only fit on the encoded scale windows.

`cross_validate` leaves one labelled split out at a time (its injections and benign notes),
fits on the rest and scores it, with a slice of the scale texts held out too and every LoCoMo
turn; the thresholds are chosen on those held-out scores, never on a split the weights saw.
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
MEANING_C = 1.0  # chosen by cross-validation among 0.25, 1, 4, 16 and 64
MEANING_ORDINARY = 6000  # scale windows the meaning part fits on (each needs a vector)
HELD_ORDINARY = 4000  # scale windows no fold fits on


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
        meaning=model.meaning.astype(np.float16),
        meaning_bias=np.float64(model.meaning_bias),
        joint_threshold=np.float64(model.joint_threshold),
    )


# --- the meaning part: a logistic regression over the sentence embedding ---------------------


def fit_meaning(
    data: Corpus, vectors: np.ndarray, c: float = MEANING_C
) -> tuple[np.ndarray, float]:
    """Weights and bias of a logistic regression over the texts' embeddings."""
    regression = LogisticRegression(C=c, max_iter=5000)
    regression.fit(vectors, data.labels, sample_weight=data.weights)
    return regression.coef_[0].astype(np.float16), float(regression.intercept_[0])


def meaning_logits(vectors: np.ndarray, weights: np.ndarray, bias: float) -> np.ndarray:
    return bias + vectors @ weights.astype(np.float32)


@dataclass
class Fold:
    """Each left-out text's two logits, (n-gram, meaning) per row."""

    split: str
    injections: np.ndarray
    benign: np.ndarray
    ordinary: np.ndarray  # held-out scale windows
    locomo: np.ndarray  # every LoCoMo dev turn (never fitted on)


def _logits(model: scorer.Model, meaning: tuple, texts: list[str], vectors) -> np.ndarray:
    ngram = [max(model.logit(p) for p in scorer.windows(scorer.normalised(t))) for t in texts]
    return np.column_stack([ngram, meaning_logits(vectors(texts), *meaning)])


def cross_validate(
    ordinary: list[str],
    vectors,
    *,
    held_ordinary: int = HELD_ORDINARY,
    meaning_ordinary: int = MEANING_ORDINARY,
    meaning_c: float = MEANING_C,
    locomo: list[str] | None = None,
) -> list[Fold]:
    """Leave one labelled split out; the last `held_ordinary` scale windows are never fitted.
    The n-gram part fits on every other scale window, the meaning part on the first
    `meaning_ordinary` of them (each needs a vector). `vectors(texts)` gives the embeddings."""
    fitted, held = ordinary[:-held_ordinary], ordinary[-held_ordinary:]
    locomo = locomo if locomo is not None else trust.locomo_turns()
    folds = []
    for left_out in FIT_SPLITS:
        injections, benign = training(tuple(s for s in FIT_SPLITS if s != left_out))
        model = fit(corpus(injections, benign, fitted))
        small = corpus(injections, benign, fitted[:meaning_ordinary])
        meaning = fit_meaning(small, vectors(small.texts), meaning_c)
        test_injections, test_benign = labelled((left_out,))
        folds.append(
            Fold(
                left_out,
                _logits(model, meaning, test_injections, vectors),
                _logits(model, meaning, test_benign, vectors),
                _logits(model, meaning, held, vectors),
                _logits(model, meaning, locomo, vectors),
            )
        )
    return folds


def flagged(logits: np.ndarray, threshold: float, *, joint: bool) -> np.ndarray:
    """Which rows the scorer flags: wording alone (column 0) or wording and meaning added."""
    summed = logits[:, 0] + logits[:, 1] if joint else logits[:, 0]
    return summed >= np.log(threshold / (1 - threshold))


def shares_at(folds: list[Fold], threshold: float, *, joint: bool) -> dict[str, float]:
    def share(which: str) -> float:
        rows = [getattr(f, which) for f in folds]
        return float(np.mean(flagged(np.concatenate(rows), threshold, joint=joint)))

    return {which: share(which) for which in ("injections", "benign", "ordinary", "locomo")}


# What a threshold must keep within, on text no fold saw. The wording alone keeps the bounds it
# was shipped with; the joint read is held to LoCoMo too (never fitted on, only bounded).
BOUNDS = {
    False: {"benign": 0.01, "ordinary": 0.0002, "locomo": 1.0},
    True: {"benign": 0.015, "ordinary": 0.0002, "locomo": 0.005},
}


def choose_threshold(folds: list[Fold], *, joint: bool) -> float:
    """The lowest threshold (probability, steps of 0.01, then 0.001 above 0.99) whose pooled
    held-out shares stay within BOUNDS."""
    for threshold in (*np.arange(0.5, 0.99, 0.01), *np.arange(0.99, 0.9995, 0.001)):
        shares = shares_at(folds, float(threshold), joint=joint)
        if all(shares[which] <= bound for which, bound in BOUNDS[joint].items()):
            return round(float(threshold), 3)
    return 0.999


def fit_all(ordinary: list[str], vectors, threshold: float, joint_threshold: float) -> scorer.Model:
    """The shipped model: every allowed split; the wording part on every ordinary window, the
    meaning part on the ones cross-validation encoded (the first MEANING_ORDINARY and the
    held-out last HELD_ORDINARY)."""
    injections, benign = training(FIT_SPLITS)
    model = fit(corpus(injections, benign, ordinary), threshold)
    encoded = [*ordinary[:MEANING_ORDINARY], *ordinary[-HELD_ORDINARY:]]
    small = corpus(injections, benign, encoded)
    model.meaning, model.meaning_bias = fit_meaning(small, vectors(small.texts))
    model.joint_threshold = joint_threshold
    return model
