"""Noticing, at write time, that a new memory looks like an update of a stored one.

"Our CI runs on Jenkins." then "CI was migrated from Jenkins to GitHub Actions.": the same
subject with a different value. No language model: the stored memories close in meaning are
the candidates, and the pair's texts are read for the signals an update leaves: words that say
something changed ("migrated", "now", "no longer", "took over"; whole words only), numbers or
versions that differ ("PostgreSQL 14" / "16"), a negation on one side only (the contradiction
stage's rule), and shared names (the same subject). Each signal adds to the pair's score; a
pair at or above UPDATE_SCORE is reported as a possible update, never superseded silently.

A pair whose only difference is a negation of the same claim ("Never commit API tokens to the
repository." / "Commit the API tokens to the repository.") is not an update: the newer text is
no more likely to be right. It is reported as a possible contradiction, for a person to decide.

The weights were set on the labelled pairs in lab/data (docs/benchmarks.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from django.utils import timezone

from . import neighbours
from .models import Memory, Namespace, PossibleUpdate

CANDIDATE_MIN = 0.45  # cosine below which two memories are not about the same thing
CANDIDATES = 5
UPDATE_SCORE = 0.9

# Words that say a value changed, in the newer text: each cue with the inflections it counts
# in, matched as whole words only ("changelog" and "migrations reviewed" say nothing changed).
# A cue stays only while it finds more training updates than it flags related pairs
# (`evaluate_validity --cues`): "joined", "sold" and "increased" did not.
CHANGE_CUES: dict[str, tuple[str, ...]] = {
    "now": ("now", "from now on"),
    "no longer": ("no longer", "no more", "anymore", "any more"),
    "instead": ("instead",),
    "again": ("again",),
    "replace": ("replace", "replaced", "replaces", "replacing", "superseded", "supersedes"),
    "switch": ("switched", "switching", "switch to", "switches to"),
    "migrate": ("migrate", "migrated", "migrates", "migrating"),
    "move": ("moved", "moves", "moving"),
    "relocate": ("relocate", "relocated", "relocates", "relocating"),
    "take over": ("took over", "taken over", "takes over", "take over", "took the"),
    "change": ("change", "changed", "changes", "changing"),
    "upgrade": ("upgrade", "upgraded", "upgrades", "upgrading"),
    "downgrade": ("downgrade", "downgraded", "downgrades", "downgrading"),
    "rename": ("rename", "renamed", "renames", "renaming", "rebrand", "rebranded", "rebrands"),
    "become": ("became", "become", "becomes"),
    "succeed": ("succeeded", "succeeds", "successor"),
    "as of": ("as of",),
    "drop": ("dropped", "dropping"),
    "retire": ("retire", "retired", "retires", "retiring"),
    "deprecate": ("deprecate", "deprecated", "deprecates", "deprecating"),
    "abandon": ("abandon", "abandoned", "abandons", "ditch", "ditched", "ditches"),
    "raise": ("raised", "raises", "lowered", "lowers"),
    "decrease": ("decrease", "decreased", "decreases", "decreasing"),
    "reduce": ("reduce", "reduced", "reduces", "reducing", "cut", "halved", "down to"),
    "extend": ("extend", "extended", "extends", "extending", "shortened", "shortens"),
    "scale": ("scaled",),
    "resign": ("resign", "resigned", "resigns", "stepped down", "appointed", "elected"),
    "rewrite": ("rewrote", "rewritten", "rewrite", "rewrites", "ported"),
    "transfer": ("transferred", "transfers", "handed over"),
    "acquire": ("acquired", "acquires", "acquisition"),
    "buy": ("bought",),
    "close": ("closed", "closes", "closing", "shut"),
    "stop": ("stopped", "stops", "stopping", "ended", "ends", "discontinued", "phased out"),
    "remove": ("removed", "withdrew", "withdrawn", "withdraws"),
    "collapse": ("collapsed", "bankrupt", "bankruptcy", "dissolved"),
    "add": ("added", "adds"),
    "ban": ("legalised", "legalized", "banned", "abolished"),
    "pass": ("passed", "overtook", "overtaken"),
    "shrink": ("shrunk", "shrank"),
    "return": ("returned",),
    "postpone": ("postponed",),
    "expand": ("expand", "expanded", "expands", "expanding"),
    "grow": ("grew", "doubled"),
    "revise": ("revised",),
    "rise": ("rose", "risen", "rises", "fell", "fallen"),
    "leave": ("left",),
}
_CUE_OF = {form: cue for cue, forms in CHANGE_CUES.items() for form in forms}
CHANGE_WORDS = re.compile(
    r"\b(?:"
    + "|".join(re.escape(f).replace(r"\ ", r"\s+") for f in sorted(_CUE_OF, key=len, reverse=True))
    + r")\b(?![-'’]\w)",
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
# A negation on one side only is a contradiction when the two texts make the same claim: at
# least this share of the shorter one's content words in the other (set on the training pairs:
# negated pairs 0.8-1.0, related pairs with a negation 0.2-0.6).
SAME_CLAIM = 0.75


class Kind:
    UPDATE = "update"  # the newer text replaces the older: a person confirms with supersede
    CONTRADICTION = "contradiction"  # one side negates the other: a person decides which holds


@dataclass(frozen=True)
class Verdict:
    score: float
    reasons: tuple[str, ...]
    changed: bool  # a change word or a different value: not only the same topic
    negated: bool = False  # a negation on one side only

    @property
    def kind(self) -> str | None:
        """An update when the newer text says something changed; a contradiction when all
        that differs is a negation ("Never commit API tokens" / "Commit the API tokens"),
        which is no reason to replace one with the other."""
        if self.score < UPDATE_SCORE:
            return None
        if self.changed:
            return Kind.UPDATE
        return Kind.CONTRADICTION if self.negated else None

    @property
    def is_update(self) -> bool:
        return self.kind == Kind.UPDATE


def change_cues(text: str) -> dict[str, str]:
    """The change cues a text states: cue -> the words that said it. A capitalised word
    inside a sentence is a name ("Rose leads design"), not a cue."""
    found: dict[str, str] = {}
    for match in CHANGE_WORDS.finditer(text):
        words = match.group(0)
        before = text[: match.start()].rstrip()
        if words[0].isupper() and before and before[-1] not in ".!?:;\n\"'(":
            continue
        found.setdefault(_CUE_OF[" ".join(words.lower().split())], words.lower())
    return found


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


def _claim_words(text: str) -> set[str]:
    return {w.rstrip("s") for w in _words(NEGATION.sub(" ", text))}


def claim_overlap(first: str, second: str) -> float:
    """The share of the shorter text's content words (negations left out) that the other
    text has too: 1.0 for "Never commit API tokens" / "Commit the API tokens"."""
    a, b = _claim_words(first), _claim_words(second)
    return len(a & b) / max(1, min(len(a), len(b)))


def judge_pair(
    older: str, newer: str, similarity: float, *, ignore_cues: frozenset[str] = frozenset()
) -> Verdict:
    """How much `newer` reads as an update of `older`, with the reasons in words.
    `ignore_cues` leaves change cues out (lab/validity.py measures each one's worth)."""
    score = W_SIMILARITY * similarity
    reasons = [f"similar meaning ({similarity:.2f})"]
    changed = negated = False
    old_cues, new_cues = change_cues(older), change_cues(newer)
    said = sorted(new_cues[cue] for cue in new_cues.keys() - old_cues.keys() - ignore_cues)
    if newer.lower().startswith("since "):  # "Since 1982 the penny is made of zinc."
        said.append("since")
    if said:
        change = said[0]
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
        # Only the same claim negated is a contradiction; "The API does not accept XML" and
        # "The API accepts JSON" both hold.
        negated = claim_overlap(older, newer) >= SAME_CLAIM
        score += W_NEGATION
        reasons.append("a negation on one side only")
    shared = (_names(older) & _names(newer)) or (_words(older) & _words(newer))
    if shared:
        score += W_SUBJECT * min(len(shared), 3)
        reasons.append("same subject (" + ", ".join(sorted(shared)[:3]) + ")")
    else:
        score += W_NO_SUBJECT
    return Verdict(round(score, 4), tuple(reasons), changed, negated)


def candidates(namespace_id: int, vectors: np.ndarray) -> list[list[tuple[Memory, float]]]:
    """Per vector, the current (not superseded, not archived) memories of the namespace
    closest in meaning, at cosine >= CANDIDATE_MIN."""
    rows = neighbours.nearest_per_vector(
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
    """The candidates `text` looks like an update of, or contradicts, best first: id, title,
    why, score and kind (Kind.UPDATE or Kind.CONTRADICTION)."""
    out = []
    for memory, similarity in found:
        verdict = judge_pair(memory.content, text, similarity)
        if verdict.kind is not None:
            out.append(
                {
                    "id": str(memory.pk),
                    "title": memory.title or memory.content[:80],
                    "why": "; ".join(verdict.reasons),
                    "score": verdict.score,
                    "kind": verdict.kind,
                }
            )
    return sorted(out, key=lambda u: -u["score"])


# Change words said in the past tense read as "it moved"; any other cue is quoted.
IRREGULAR_PAST = frozenset(
    [
        "took",
        "taken",
        "became",
        "rose",
        "risen",
        "fell",
        "fallen",
        "left",
        "grew",
        "rewrote",
        "rewritten",
        "bought",
        "shut",
        "withdrew",
        "withdrawn",
        "shrank",
        "shrunk",
        "overtook",
        "overtaken",
        "cut",
    ]
)
REASON = re.compile(r"^(?P<kind>[a-z ]+?)(?: \((?P<detail>.*)\))?$")


def queued_update(namespace: Namespace, newer: Memory, update: dict) -> PossibleUpdate:
    """The row that queues one of `possible_updates`' findings for a person to confirm."""
    return PossibleUpdate(
        namespace=namespace,
        newer=newer,
        older_id=update["id"],
        why=update["why"][:500],
        score=update["score"],
        kind=update["kind"],
    )


def why_in_words(why: str, text: str = "") -> str:
    """`judge_pair`'s reasons (as stored: joined with "; ") as one sentence a person reads:
    "It names the same subject (Jenkins) and says it moved." Names keep their spelling in
    `text` (the newer memory), where found; the similarity score is left out."""
    said: dict[str, str] = {}
    for reason in filter(None, (r.strip() for r in why.split(";"))):
        match = REASON.match(reason)
        if match:
            said[match["kind"]] = match["detail"] or ""
    parts = []
    if "same subject" in said:
        names = [_as_written(n.strip(), text) for n in said["same subject"].split(",")]
        noun = "subject" if len(names) == 1 else "subjects"
        parts.append(f"names the same {noun} ({', '.join(names)})")
    if "says it changed" in said:
        words = said["says it changed"].strip("'\"")
        first = words.split()[0] if words else ""
        past = first.endswith("ed") or first in IRREGULAR_PAST
        parts.append(f"says it {words}" if past else f"says something changed (“{words}”)")
    if "a different value" in said:
        gone, _, came = said["a different value"].partition(" -> ")
        parts.append(
            f"gives {came} where the other said {gone}"
            if gone != "?"
            else f"gives a new value ({came})"
        )
    if "a negation on one side only" in said:
        parts.append("one of the two negates the other")
    if not parts:
        return "It reads close in meaning."
    body = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return f"It {body}." if not body.startswith("one of") else f"{body[0].upper()}{body[1:]}."


def _as_written(word: str, text: str) -> str:
    """`word` (lower-cased by the detector) as `text` spells it, else as it is."""
    found = re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text, re.IGNORECASE)
    return found.group(0) if found else word
