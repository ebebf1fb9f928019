"""The semantic query without the tag entities it names.

A sentence embedding of "What has Alice painted?" is pulled as much by the name as by the
painting: in a dialog where one speaker's name is in half the memories, the nearest memories
are greetings that name her ("Bye Alice!"), not the turns about painting. The entity boost
already rewards the memories tagged with a name the query uses, and the lexical retriever
weighs the name by its idf; the semantic retriever is asked about the rest of the question.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .analyse import keywords

# A query left with fewer keywords keeps its own vector: in a store whose tags are topics
# ("which database do we use" with a tag "database"), the name is what the query is about,
# and "which do we use" would match nothing in particular. (locomo-dev: the same rankings with
# 1 or 2.)
MIN_KEYWORDS = 2


def without_entities(text: str, entities: Sequence[str]) -> str | None:
    """`text` with each entity (and its possessive "'s") removed, or None when that changes
    nothing or would leave fewer than MIN_KEYWORDS keywords."""
    out = text
    for entity in sorted(entities, key=len, reverse=True):
        words = r"[\s_-]+".join(re.escape(w) for w in re.split(r"[\s_-]+", entity.strip()) if w)
        if not words:
            continue
        out = re.sub(rf"\b{words}(?:['’]s)?\b", " ", out, flags=re.IGNORECASE)
    out = re.sub(r"\s+([?.!,])", r"\1", re.sub(r"\s+", " ", out)).strip()
    if out == text.strip() or len(keywords(out)) < MIN_KEYWORDS:
        return None
    return out
