"""Deep mode: at most 3 query variants, the original always first. Variants come from a small
domain vocabulary of synonyms and from splitting compound terms (EntityStore -> entity store,
rate_limit -> rate limit)."""

from __future__ import annotations

import re

MAX_VARIANTS = 3

SYNONYMS: dict[str, tuple[str, ...]] = {
    "bug": ("error", "issue"), "error": ("exception", "failure"), "crash": ("failure", "error"),
    "fix": ("resolve", "repair"), "slow": ("performance", "latency"), "fast": ("performance",),
    "db": ("database",), "database": ("postgres", "db"), "config": ("configuration", "settings"),
    "settings": ("configuration",), "auth": ("authentication", "login"), "login": ("sign in",),
    "deploy": ("release", "deployment"), "test": ("spec", "check"), "doc": ("documentation",),
    "job": ("work", "career"), "hobby": ("pastime", "interest"), "kids": ("children",),
    "children": ("kids",), "trip": ("travel", "vacation"), "friend": ("buddy",),
    "car": ("vehicle",), "house": ("home",), "home": ("house",), "pet": ("dog", "cat"),
}  # fmt: skip

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def split_compound(word: str) -> str:
    return _CAMEL.sub(" ", word).replace("_", " ").replace("-", " ").lower()


def query_variants(query: str, max_variants: int = MAX_VARIANTS) -> list[str]:
    variants = [query]
    words = query.split()
    split = " ".join(split_compound(w) if (_CAMEL.search(w) or "_" in w) else w for w in words)
    if split != query:
        variants.append(split)
    lowered = [w.strip("?,.!;:").lower() for w in words]
    for i, word in enumerate(lowered):
        if len(variants) >= max_variants:
            break
        for synonym in SYNONYMS.get(word, ()):
            candidate = " ".join(synonym if j == i else w for j, w in enumerate(words))
            if candidate not in variants:
                variants.append(candidate)
                break
    return variants[:max_variants]
