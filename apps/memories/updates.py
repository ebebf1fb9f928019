"""Noticing, at write time, that a new memory looks like an update of a stored one.

"Our CI runs on Jenkins." then "CI was migrated from Jenkins to GitHub Actions.": the same
subject with a different value. No language model: the stored memories close in meaning are
the candidates, and the pair's texts are read for the signals an update leaves: words that say
something changed ("migrated", "now", "no longer", "took over"), numbers or versions that differ
("PostgreSQL 14" / "16"), a negation on one side only (the contradiction stage's rule), and
shared names (the same subject). Each signal adds to the pair's score; a pair at or above
UPDATE_SCORE is reported as a possible update, never superseded silently.

The weights were set on the labelled pairs in lab/data (docs/benchmarks.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from django.utils import timezone

from . import nearest
from .models import Memory

CANDIDATE_MIN = 0.45  # cosine below which two memories are not about the same thing
CANDIDATES = 5
UPDATE_SCORE = 0.9

# Words that say a value changed, in the newer text.
CHANGE_WORDS = re.compile(
    r"\b(?:now|no longer|any ?more|anymore|instead|again|replac\w*|switch\w*|migrat\w*"
    r"|mov(?:ed|es|ing)|relocat\w*|took over|taken over|takes over|chang\w*|upgrad\w*"
    r"|downgrad\w*|renam\w*|rebrand\w*|became|become|becomes|succeed\w*|successor"
    r"|from now on|as of|dropp\w*|retir\w*|deprecat\w*|abandon\w*|ditch\w*|rais(?:ed|es)"
    r"|lower(?:ed|s)|increas\w*|decreas\w*|reduc\w*|extend\w*|shorten\w*|cut|scaled"
    r"|resign\w*|stepped down|appointed|elected|rewr\w*|ported|transferr\w*"
    r"|handed over|acquir\w*|acquisition|bought|sold|clos(?:ed|es|ing)|shut|stopp\w*"
    r"|ended|ends|removed|withdr\w*|collaps\w*|bankrupt\w*|dissolv\w*|added|adds"
    r"|legali[sz]ed|banned|abolished|joined|passed|overt(?:ook|aken)|shrunk|shrank|returned"
    r"|discontinued|phased out|postponed|expand\w*|grew|doubled|halved|revised|down to"
    r"|overtook|no more|took the|supersed\w*|rose|risen|rises|fell|fallen|left(?!-))\b",
    re.IGNORECASE,
)
NEGATION = re.compile(
    r"\b(?:not|never|no|don't|do not|doesn't|does not|isn't|aren't|won't|stopped|without)\b",
    re.IGNORECASE,
)
NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,:]\d+)*(?![\w])")
YEAR = re.compile(r"^(?:1[89]|20)\d\d$")  # when something happened, not a value it has
NAME = re.compile(r"\b[A-Z][\w.+#-]*(?:\s+[A-Z][\w.+#-]*)*")
WORD = re.compile(r"[a-z][a-z0-9+#.-]+")
STOP = frozenset(
    [
        "the",
        "a",
        "an",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "by",
        "with",
        "from",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "has",
        "have",
        "had",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "our",
        "we",
        "us",
        "they",
        "their",
        "there",
        "as",
        "now",
        "not",
        "no",
        "new",
        "all",
        "any",
        "every",
        "into",
        "over",
        "after",
        "before",
        "since",
        "then",
        "than",
        "also",
        "who",
        "which",
        "what",
        "when",
        "where",
        "how",
        "per",
    ]
)

# Signal weights (set on the labelled training pairs, see the module docstring).
W_SIMILARITY = 1.0
W_CHANGE = 0.4
W_VALUE = 0.25
W_NEGATION = 0.15
W_SUBJECT = 0.1
W_NO_SUBJECT = -0.3


@dataclass(frozen=True)
class Verdict:
    score: float
    reasons: tuple[str, ...]
    changed: bool  # a change word, a different value or a negation: not only the same topic

    @property
    def is_update(self) -> bool:
        return self.changed and self.score >= UPDATE_SCORE


def _numbers(text: str) -> set[str]:
    return {n for n in NUMBER.findall(text) if not YEAR.match(n)}


def _names(text: str) -> set[str]:
    """Capitalised words and runs of them, the sentence's first word left out."""
    body = text.strip()
    first = re.match(r"\W*\w+", body)
    skip = first.end() if first else 0
    return {m.group(0).lower() for m in NAME.finditer(body) if m.start() >= skip}


def _words(text: str) -> set[str]:
    return {w.strip(".") for w in WORD.findall(text.lower())} - STOP


def judge_pair(older: str, newer: str, similarity: float) -> Verdict:
    """How much `newer` reads as an update of `older`, with the reasons in words."""
    score = W_SIMILARITY * similarity
    reasons = [f"similar meaning ({similarity:.2f})"]
    changed = False
    said = {m.lower() for m in CHANGE_WORDS.findall(newer)} - {
        m.lower() for m in CHANGE_WORDS.findall(older)
    }
    if newer.lower().startswith("since "):  # "Since 1982 the penny is made of zinc."
        said.add("since")
    if said:
        change = min(said)
        changed = True
        score += W_CHANGE
        reasons.append(f"says it changed ({change!r})")
    old_numbers, new_numbers = _numbers(older), _numbers(newer)
    if old_numbers and new_numbers - old_numbers:
        changed = True
        score += W_VALUE
        gone = ", ".join(sorted(old_numbers - new_numbers)) or "?"
        came = ", ".join(sorted(new_numbers - old_numbers)) or "?"
        reasons.append(f"a different value ({gone} -> {came})")
    if bool(NEGATION.search(older)) != bool(NEGATION.search(newer)):
        changed = True
        score += W_NEGATION
        reasons.append("a negation on one side only")
    shared = (_names(older) & _names(newer)) or (_words(older) & _words(newer))
    if shared:
        score += W_SUBJECT * min(len(shared), 3)
        reasons.append("same subject (" + ", ".join(sorted(shared)[:3]) + ")")
    else:
        score += W_NO_SUBJECT
    return Verdict(round(score, 4), tuple(reasons), changed)


def candidates(namespace_id: int, vectors: np.ndarray) -> list[list[tuple[Memory, float]]]:
    """Per vector, the current (not superseded, not archived) memories of the namespace
    closest in meaning, at cosine >= CANDIDATE_MIN."""
    rows = nearest.nearest_per_vector(
        namespace_id,
        vectors,
        limit=CANDIDATES,
        min_similarity=CANDIDATE_MIN,
        valid_at=timezone.now(),
    )
    memories = Memory.objects.in_bulk({r[1] for r in rows})
    out: list[list[tuple[Memory, float]]] = [[] for _ in vectors]
    for pos, memory_id, similarity in rows:
        if memory_id in memories:
            out[pos - 1].append((memories[memory_id], float(similarity)))
    return out


def possible_updates(text: str, found: list[tuple[Memory, float]]) -> list[dict]:
    """The candidates `text` looks like an update of, best first: id, title, why."""
    out = []
    for memory, similarity in found:
        verdict = judge_pair(memory.content, text, similarity)
        if verdict.is_update:
            out.append(
                {
                    "id": str(memory.pk),
                    "title": memory.title or memory.content[:80],
                    "why": "; ".join(verdict.reasons),
                    "score": verdict.score,
                }
            )
    return sorted(out, key=lambda u: -u["score"])
