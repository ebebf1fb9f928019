"""The abstention half of `manage.py evaluate`: does the evidence-gap flag tell a real answer
from noise?

Every query is searched a second time in another namespace of the dataset, one that cannot hold
its evidence (relevance ids belong to the query's own namespace). Those searches are
"unanswerable": the flag should fire. The query's own search is "answerable" when its evidence
reached the top 10: the flag should stay quiet. The confidence number the flag thresholds is
judged by its AUROC over the two groups (1.0: every answerable search is more confident than
every unanswerable one; 0.5: a coin).

Also here: selecting conversations of a dataset (`--conversations 0-2`), so a change can be
judged on two halves that share no conversation.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from django.db.models import Max

from apps.memories.models import Memory, Namespace

HIT_K = 10


def namespaces_in_order(records: Sequence[dict]) -> list[str]:
    """The dataset's namespaces in order of first appearance (conversation 0, 1, ...)."""
    return list(dict.fromkeys(r["namespace"] for r in records))


def select_namespaces(names: Sequence[str], spec: str) -> list[str]:
    """Namespaces picked by `spec`: comma-separated positions or ranges ("0-2", "0,3,4") or
    namespace names ("conv-26,conv-30"). Raises ValueError naming what does not exist."""
    chosen: list[str] = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        if part in names:
            chosen.append(part)
            continue
        low, sep, high = part.partition("-")
        if not (low.isdigit() and (not sep or high.isdigit())):
            raise ValueError(f"unknown conversation {part!r}; known: {', '.join(names)}")
        first, last = int(low), int(high) if sep else int(low)
        if first > last or last >= len(names):
            raise ValueError(f"conversation range {part!r} outside 0-{len(names) - 1}")
        chosen.extend(names[first : last + 1])
    if not chosen:
        raise ValueError("no conversation selected")
    return list(dict.fromkeys(chosen))


def other_namespace(names: Sequence[str]) -> dict[str, str]:
    """Each namespace's partner for the unanswerable searches: the next one in dataset order,
    the last one wrapping to the first (deterministic; empty when there is only one)."""
    if len(names) < 2:
        return {}
    return {name: names[(i + 1) % len(names)] for i, name in enumerate(names)}


def auroc(positives: Sequence[float], negatives: Sequence[float]) -> float | None:
    """Probability that a random positive scores above a random negative (ties count half);
    the Mann-Whitney form, exact for small lists. None when a group is empty."""
    if not positives or not negatives:
        return None
    ordered = sorted(negatives)
    total = 0.0
    for p in positives:
        below = bisect.bisect_left(ordered, p)
        ties = bisect.bisect_right(ordered, p) - below
        total += below + 0.5 * ties
    return total / (len(positives) * len(negatives))


def abstention_report(answerable: Sequence[dict], unanswerable: Sequence[dict]) -> dict:
    """answerable: the queries' own searches (rows with hit@10, evidence_gap, confidence);
    unanswerable: the same queries searched in another namespace (evidence_gap, confidence).
    Only own searches whose evidence reached the top 10 count as answerable."""
    hits = [r for r in answerable if r["hit@10"] > 0]

    def rate(rows: Sequence[dict]) -> float:
        return round(sum(1 for r in rows if r["evidence_gap"]) / len(rows), 4) if rows else 0.0

    # no confidence (the confidence stage switched off): no AUROC
    score = auroc(
        [r["confidence"] for r in hits if r["confidence"] is not None],
        [r["confidence"] for r in unanswerable if r["confidence"] is not None],
    )
    return {
        "unanswerable_searches": len(unanswerable),
        "answerable_searches": len(hits),
        "flag_rate_unanswerable": rate(unanswerable),
        "flag_rate_answerable": rate(hits),
        "flag_rate_all_own": rate(answerable),
        "auroc": round(score, 4) if score is not None else None,
    }


def run_unanswerable(queries: list[dict], search_fn, *, mode: str, config=None) -> list:
    """Each query searched in its partner namespace (see other_namespace); rows carry the
    flag, the confidence and the query's category."""
    names = list(dict.fromkeys(q["namespace"] for q in queries))
    partner = other_namespace(names)
    if not partner:
        return []
    namespaces = {n.name: n for n in Namespace.objects.filter(name__in=names)}
    as_of = dict(
        Memory.objects.filter(namespace__in=namespaces.values())
        .values_list("namespace__name")
        .annotate(newest=Max("created_at"))
    )
    rows = []
    for q in queries:
        target = partner[q["namespace"]]
        response = search_fn(
            namespace=namespaces[target],
            query=q["query"],
            mode=mode,
            limit=HIT_K,
            now=as_of[target],
            log=False,
            config=config,
        )
        rows.append(
            {
                "query": q["query"],
                "category": q.get("category", "all"),
                "namespace": target,
                "evidence_gap": response.flags["evidence_gap"],
                "confidence": response.confidence,
                "signals": response.signals,
            }
        )
    return rows
