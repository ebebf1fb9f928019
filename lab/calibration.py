"""Fitting the confidence estimate (`manage.py evaluate --calibrate`).

A logistic regression over the signals of pipeline/confidence.py: positives are searches whose
evidence reached the top 10 in their own namespace, negatives the same queries searched in a
namespace that cannot hold the answer. Newton's method with a small ridge penalty: six features
and a few hundred rows need nothing bigger. The fit is printed as a table to paste into
confidence.COEFFICIENTS after it has been checked on the other half of the data.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from apps.search.pipeline.confidence import FEATURES, THRESHOLD

from .abstention import auroc

RIDGE = 0.1
ITERATIONS = 50


def _matrix(signals: Sequence[Mapping[str, float]]) -> np.ndarray:
    return np.array([[float(s[name]) for name in FEATURES] for s in signals], dtype=float)


def training_set(answerable: Sequence[dict], unanswerable: Sequence[dict]):
    """(X, y): answerable = own searches with hit@10; unanswerable = all partner searches."""
    pos = [r["signals"] for r in answerable if r["hit@10"] > 0 and r.get("signals")]
    neg = [r["signals"] for r in unanswerable if r.get("signals")]
    x = _matrix(pos + neg)
    y = np.array([1.0] * len(pos) + [0.0] * len(neg))
    return x, y


def fit_logistic(x: np.ndarray, y: np.ndarray, ridge: float = RIDGE) -> tuple[float, np.ndarray]:
    """(intercept, weights) maximizing the penalized log-likelihood (intercept not penalized)."""
    design = np.hstack([np.ones((len(x), 1)), x])
    beta = np.zeros(design.shape[1])
    penalty = np.eye(design.shape[1]) * ridge
    penalty[0, 0] = 0.0
    for _ in range(ITERATIONS):
        p = 1.0 / (1.0 + np.exp(-np.clip(design @ beta, -50, 50)))
        gradient = design.T @ (y - p) - penalty @ beta
        hessian = design.T @ (design * (p * (1 - p))[:, None]) + penalty
        step = np.linalg.solve(hessian, gradient)
        beta += step
        if np.max(np.abs(step)) < 1e-8:
            break
    return float(beta[0]), beta[1:]


def predict(signals: Sequence[Mapping[str, float]], intercept: float, weights) -> np.ndarray:
    x = _matrix(signals)
    return 1.0 / (1.0 + np.exp(-np.clip(intercept + x @ np.asarray(weights), -50, 50)))


def check(answerable, unanswerable, intercept, weights, threshold=THRESHOLD) -> dict:
    """Flag rates and AUROC of given coefficients on a set of searches (a held-out half)."""
    pos = [r["signals"] for r in answerable if r["hit@10"] > 0 and r.get("signals")]
    neg = [r["signals"] for r in unanswerable if r.get("signals")]
    p_pos, p_neg = predict(pos, intercept, weights), predict(neg, intercept, weights)
    score = auroc(list(p_pos), list(p_neg))
    return {
        "flag_rate_unanswerable": round(float(np.mean(p_neg < threshold)), 4),
        "flag_rate_answerable": round(float(np.mean(p_pos < threshold)), 4),
        "auroc": round(score, 4) if score is not None else None,
    }


def fit(answerable: Sequence[dict], unanswerable: Sequence[dict]) -> dict:
    x, y = training_set(answerable, unanswerable)
    intercept, weights = fit_logistic(x, y)
    out = {
        "intercept": round(intercept, 3),
        "coefficients": {n: round(float(w), 3) for n, w in zip(FEATURES, weights, strict=True)},
        "positives": int(y.sum()),
        "negatives": int(len(y) - y.sum()),
    }
    out["on_this_data"] = check(answerable, unanswerable, intercept, weights)
    return out


def format_fit(fitted: dict) -> str:
    lines = [
        "",
        f"confidence fit ({fitted['positives']} answerable, {fitted['negatives']} unanswerable)",
        f"  intercept {fitted['intercept']:+.3f}",
    ]
    lines += [f"  {name:12s} {value:+.3f}" for name, value in fitted["coefficients"].items()]
    lines.append(f"  on this data: {fitted['on_this_data']}")
    return "\n".join(lines)
