"""Stage 11: results that contradict each other: joined by a `contradicts` edge, or a
lower-tier memory that is close in meaning to a constitutional one but differs in negation
(one says "never"/"don't"/"not", the other does not)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from apps.memories.models import Memory
from apps.search.types import Ranked

NEGATION = re.compile(
    r"\b(?:not|never|no|don't|do not|doesn't|avoid|stop|must not|shouldn't)\b", re.IGNORECASE
)
SIMILAR = 0.75


def tier_pairs(items: Sequence[tuple[str, str, str, object]]) -> list[tuple[str, str]]:
    """items: (id, tier, content, embedding). Pairs (constitutional, other) that disagree."""
    pairs = []
    rules = [x for x in items if x[1] == "constitutional" and x[3] is not None]
    for rule_id, _, rule_text, rule_vec in rules:
        for other_id, tier, text, vec in items:
            if other_id == rule_id or tier == "constitutional" or vec is None:
                continue
            similar = float(np.dot(np.asarray(rule_vec), np.asarray(vec))) >= SIMILAR
            if similar and bool(NEGATION.search(rule_text)) != bool(NEGATION.search(text)):
                pairs.append((rule_id, other_id))
    return pairs


def find(items: Sequence[Ranked], edge_pairs: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """Contradicting pairs among the final results: the `contradicts` edges among them (read
    with their payload, response.contradicting_pairs) first, then the constitutional-tier
    check (which needs the texts, fetched only when a rule is present)."""
    ids = [r.id for r in items]
    pairs = list(edge_pairs)
    if any(r.tier == "constitutional" for r in items):
        texts = {
            str(k): v for k, v in Memory.objects.filter(id__in=ids).values_list("id", "content")
        }
        rows = [(r.id, r.tier, texts.get(r.id, ""), r.embedding) for r in items]
        pairs += [p for p in tier_pairs(rows) if p not in pairs]
    return pairs
