"""Fitting the learned re-ranker (pipeline/rerank_learned.py) offline: collect each
benchmark query's head and features through the real search(), then fit a linear model on
one set of conversations and judge it on the others. Tooling, not the read path (numpy only).

A model is judged by re-ordering the collected heads (recall@10 and nDCG@10 of the new
order); `manage.py evaluate` then confirms it end to end, where MMR and diversity follow.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from apps.search.pipeline import rerank_learned
from apps.search.pipeline.rerank_learned import FEATURES, Model

from .evaluation import ndcg_at, recall_at


@dataclass
class Sample:
    """One query's collected head: external ids in the boosted order and their features."""

    namespace: str
    category: str
    query: str
    relevant: set[str]
    ids: list[str]
    x: np.ndarray

    @property
    def labels(self) -> np.ndarray:
        return np.array([1.0 if k in self.relevant else 0.0 for k in self.ids])


def collect(
    queries: list[dict], prefix: str, search_fn: Callable, run_queries: Callable, config=None
):
    """Run the queries through `run_queries` (evaluation.run_queries) with the capture on;
    one Sample per query, in order."""
    from apps.memories.models import Memory

    captured: list[dict] = []

    def searching(**kwargs):
        found: list = []
        token = rerank_learned.capture.set(found)
        try:
            return search_fn(**kwargs)
        finally:
            rerank_learned.capture.reset(token)
            captured.append(found[-1] if found else {"ids": [], "x": np.zeros((0, len(FEATURES)))})

    rows = run_queries(queries, searching, mode="hybrid", config=config)
    captured = captured[1:]  # the warm-up search
    public = dict(
        Memory.objects.filter(namespace__name__startswith=prefix).values_list("id", "external_id")
    )
    samples = []
    for q, got in zip(queries, captured, strict=True):
        samples.append(
            Sample(
                namespace=q["namespace"].removeprefix(prefix),
                category=q.get("category", "all"),
                query=q["query"],
                relevant=set(q["relevant"]),
                ids=[public.get(_uuid(k), k) for k in got["ids"]],
                x=np.asarray(got["x"], dtype=np.float64).reshape(-1, len(FEATURES)),
            )
        )
    return samples, rows


def _uuid(key: str):
    import uuid

    try:
        return uuid.UUID(str(key))
    except ValueError:
        return key


def save(samples: Sequence[Sample], path: Path) -> None:
    with open(path, "w") as handle:
        for s in samples:
            record = {
                "namespace": s.namespace,
                "category": s.category,
                "query": s.query,
                "relevant": sorted(s.relevant),
                "ids": s.ids,
                "x": s.x.round(6).tolist(),
            }
            handle.write(json.dumps(record) + "\n")


def load(path: Path) -> list[Sample]:
    samples = []
    with open(path) as handle:
        for line in handle:
            r = json.loads(line)
            x = np.asarray(r["x"], dtype=np.float64).reshape(-1, len(FEATURES))
            samples.append(
                Sample(r["namespace"], r["category"], r["query"], set(r["relevant"]), r["ids"], x)
            )
    return samples


def fit(
    samples: Sequence[Sample], *, l2: float = 1.0, pairwise: bool = True, head: int = 50
) -> Model:
    """A linear scorer. Pairwise: logistic loss on (relevant - other) feature differences
    within each query, so only the order inside a head is learnt; else pointwise."""
    rows = [s.x[:head] for s in samples if len(s.ids)]
    stacked = np.vstack(rows)
    mean = stacked.mean(axis=0)
    scale = stacked.std(axis=0)
    scale[scale < 1e-9] = 1.0
    if pairwise:
        xs, ys = [], []
        for s in samples:
            z = (s.x[:head] - mean) / scale
            y = s.labels[:head]
            pos, neg = np.flatnonzero(y > 0), np.flatnonzero(y == 0)
            if not len(pos) or not len(neg):
                continue
            diff = (z[pos][:, None, :] - z[neg][None, :, :]).reshape(-1, z.shape[1])
            weight = 1.0 / len(diff)  # every query counts once
            xs.append(np.vstack([diff, -diff]))
            ys.append(np.concatenate([np.ones(len(diff)), np.zeros(len(diff))]))
            ys[-1] = np.stack([ys[-1], np.full(2 * len(diff), weight)], axis=1)
        x = np.vstack(xs)
        y_w = np.vstack(ys)
        coef = _logistic(x, y_w[:, 0], y_w[:, 1], l2, intercept=False)
    else:
        z = (stacked - mean) / scale
        y = np.concatenate([s.labels[:head] for s in samples if len(s.ids)])
        coef = _logistic(z, y, np.ones(len(y)), l2, intercept=True)[:-1]
    return Model(coef=coef, mean=mean, scale=scale, head=head)


def _logistic(x, y, w, l2: float, intercept: bool, steps: int = 50) -> np.ndarray:
    """L2-regularised logistic regression by Newton's method (a few dozen features)."""
    if intercept:
        x = np.hstack([x, np.ones((len(x), 1))])
    w = w / w.sum()  # a weighted mean loss: `l2` means the same whatever the sample size
    beta = np.zeros(x.shape[1])
    penalty = np.full(x.shape[1], l2)
    if intercept:
        penalty[-1] = 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ beta, -30, 30)))
        grad = x.T @ (w * (p - y)) + penalty * beta
        hess = (x * (w * p * (1 - p))[:, None]).T @ x + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    return beta


def judge(samples: Iterable[Sample], model: Model | None) -> dict[str, dict[str, float]]:
    """recall@10 and nDCG@10 of each head re-ordered by `model` (None: as collected),
    overall and per category."""
    per: dict[str, list[tuple[float, float]]] = {}
    for s in samples:
        ids = s.ids
        if model is not None and len(ids) > 1:
            head = min(model.head, len(ids))
            values = model.score(s.x[:head])
            order = sorted(range(head), key=lambda i: (-values[i], i))
            ids = [s.ids[i] for i in order] + s.ids[head:]
        pair = (recall_at(ids, s.relevant, 10), ndcg_at(ids, s.relevant, 10))
        per.setdefault("overall", []).append(pair)
        per.setdefault(s.category, []).append(pair)
    return {
        name: {
            "recall@10": round(float(np.mean([p[0] for p in pairs])), 4),
            "ndcg@10": round(float(np.mean([p[1] for p in pairs])), 4),
            "n": len(pairs),
        }
        for name, pairs in sorted(per.items())
    }


def describe(model: Model) -> str:
    width = max(len(n) for n in FEATURES)
    return "\n".join(
        f"  {name:<{width}} {coef:+.3f}"
        for name, coef in sorted(zip(FEATURES, model.coef, strict=True), key=lambda p: -abs(p[1]))
        if not math.isclose(coef, 0.0)
    )
