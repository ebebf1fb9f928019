"""Strategy weights learned from search feedback (SPEC section 6).

A *feedback entry* is one (search, strategy) pair: a QueryLog that received feedback, and a
strategy that found at least one of the results it returned (the strategy appears in that
result's `ranks`). Its outcome is:

- with per-result feedback on results that strategy found: useful if at least one of them was
  marked useful, not useful if all of them were marked not useful;
- otherwise, the overall verdict `was_useful`, when given;
- otherwise there is no entry for that strategy in that search.

Per strategy, the job takes its latest 100 entries (by `feedback_at`), and once there are at
least 10: usefulness_rate = useful / entries and weight = 0.2 + usefulness_rate x 1.6 (0.2..1.8).
With fewer than 10 the stored weight is 1.0 (neutral, as when no row exists) and the row only
shows the sample so far. Strategies without any entry have no row. At most the latest 5000
searches with feedback are read, which bounds the work for a strategy that rarely takes part.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import transaction

from apps.memories.models import Namespace

from ..models import QueryLog, Strategy, StrategyWeights
from ..pipeline.reads.weights import forget_learned_weights

WINDOW = 100
MIN_ENTRIES = 10
MAX_SEARCHES_SCANNED = 5000  # bounds the work when a strategy rarely takes part
STRATEGIES = frozenset(Strategy.values)


def learned_weight(rate: float) -> float:
    return 0.2 + rate * 1.6


def feedback_entries(log: QueryLog) -> dict[str, bool]:
    """{strategy: useful} for one search with feedback, per the rules above."""
    judged = {str(k): bool(v) for k, v in (log.result_feedback or {}).items()}
    found: dict[str, list[str]] = {}
    for result in log.results or []:
        for strategy in result.get("ranks") or {}:
            if strategy in STRATEGIES:
                found.setdefault(strategy, []).append(str(result.get("id")))
    entries = {}
    for strategy, ids in found.items():
        verdicts = [judged[i] for i in ids if i in judged]
        if verdicts:
            entries[strategy] = any(verdicts)
        elif log.was_useful is not None:
            entries[strategy] = bool(log.was_useful)
    return entries


def usefulness(logs: Iterable[QueryLog]) -> dict[str, tuple[int, int]]:
    """{strategy: (useful, entries)} over the latest WINDOW entries each; logs newest first."""
    outcomes: dict[str, list[bool]] = {}
    for log in logs:
        for strategy, useful in feedback_entries(log).items():
            bucket = outcomes.setdefault(strategy, [])
            if len(bucket) < WINDOW:
                bucket.append(useful)
        if len(outcomes) == len(STRATEGIES) and all(len(b) >= WINDOW for b in outcomes.values()):
            break
    return {s: (sum(b), len(b)) for s, b in outcomes.items()}


def feedback_weights_update(*, namespace: Namespace, **_options: object) -> dict[str, Any]:
    logs = (
        QueryLog.objects.filter(namespace=namespace, feedback_at__isnull=False)
        .order_by("-feedback_at", "-id")
        .only("id", "results", "was_useful", "result_feedback")
    )
    counts = usefulness(logs[:MAX_SEARCHES_SCANNED].iterator(chunk_size=200))
    with transaction.atomic():
        before = {
            w.strategy: (w.weight, w.usefulness_rate, w.sample_size)
            for w in StrategyWeights.objects.select_for_update().filter(namespace=namespace)
        }
        rows, after = [], {}
        for strategy, (useful, n) in sorted(counts.items()):
            rate = useful / n
            weight = learned_weight(rate) if n >= MIN_ENTRIES else 1.0
            after[strategy] = (weight, rate, n)
            rows.append(
                StrategyWeights(
                    namespace=namespace,
                    strategy=strategy,
                    weight=weight,
                    usefulness_rate=rate,
                    sample_size=n,
                )
            )
        changed = [s for s in after if before.get(s) != after[s]]
        if changed:
            StrategyWeights.objects.bulk_create(
                [r for r in rows if r.strategy in changed],
                update_conflicts=True,
                unique_fields=["namespace", "strategy"],
                update_fields=["weight", "usefulness_rate", "sample_size", "updated_at"],
            )
        removed = set(before) - set(after)
        if removed:
            StrategyWeights.objects.filter(namespace=namespace, strategy__in=removed).delete()
    if changed or removed:  # searches here read them again (pipeline/reads/weights.py)
        forget_learned_weights(namespace.pk)
    return {
        "strategies_updated": len(changed) + len(removed),
        "weights": {s: round(w, 4) for s, (w, _, _) in after.items()},
        "samples": {s: n for s, (_, _, n) in after.items()},
    }
