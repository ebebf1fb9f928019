"""Stage 1: what the query asks for. Intent comes from the nearest centroid of example queries
in embedding space (not keyword rules alone); entities are identifiers, file paths, quoted
phrases and tag names known in the namespace; time phrases become an after/before range."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime
from functools import lru_cache

import numpy as np

from apps.search.types import QueryAnalysis
from apps.vectors.embeddings import embed_texts

from .question_kind import CAUSE, EFFECT, learned_direction
from .timeexpr import ASKS_WHEN, TimeOutOfRange, find_time_phrase, parse_time_expression

INTENT_EXAMPLES: dict[str, tuple[str, ...]] = {
    "lookup": (
        "what is the value of the timeout setting",
        "what did she say about her job",
        "which database do we use",
        "where does he live",
        "what is the name of her dog",
    ),
    "find_spec": (
        "what are the requirements for the export feature",
        "specification of the API response format",
        "what does the design document say about caching",
        "acceptance criteria for the login page",
    ),
    "fix_bug": (
        "why does the build fail with an import error",
        "how to fix the crash on startup",
        "error connection refused when running tests",
        "the page is broken after the upgrade, what went wrong",
    ),
    "understand": (
        "how does the authentication flow work",
        "explain the architecture of the search pipeline",
        "why did we choose postgres over mongodb",
        "why does she enjoy painting so much",
    ),
    "explore": (
        "what do we know about performance",
        "show me everything related to deployment",
        "what are his hobbies and interests",
        "tell me about the team's projects",
    ),
    "temporal": (
        "when did we migrate the database",
        "what changed last week",
        "when did she move to the new city",
        "what happened yesterday",
        "how long ago did he start the job",
    ),
    "relation": (
        "what depends on the billing module",
        "what caused the outage",
        "how is the cache related to the queue",
        "what superseded the old deployment process",
    ),
}

QUESTION_WORDS = ("how", "what", "why", "where", "when", "which", "who")
STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "for",
        "and",
        "or",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "do",
        "does",
        "did",
        "with",
        "at",
        "by",
        "from",
        "as",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "i",
        "you",
        "he",
        "she",
        "we",
        "they",
        "me",
        "my",
        "your",
        "his",
        "her",
        "our",
        "their",
        "what",
        "how",
        "why",
        "where",
        "when",
        "which",
        "who",
        "whom",
        "about",
        "into",
        "than",
        "then",
        "so",
        "if",
        "not",
        "no",
    ]
)
IDENTIFIER = re.compile(r"\b(?:[A-Z][a-z0-9]+[A-Z]\w*|[a-z]+_[a-z0-9_]+|[a-z]+[A-Z]\w+)\b")
FILE_PATH = re.compile(
    r"(?:[\w.-]+/)+[\w.-]+|\b[\w-]+\.(?:py|js|ts|tsx|md|go|rs|java|rb|"
    r"yml|yaml|json|toml|sql|html|css|sh|c|h|cpp)\b"
)
# A single quote opens and closes a phrase only outside a word: the apostrophes of "Melanie's
# daughter's birthday" quote nothing (read as quotes, they made "s daughter" a phrase).
QUOTED = re.compile(r"\"([^\"]{2,200})\"|(?<!\w)'([^']{2,200})'(?!\w)")
WORD = re.compile(r"[A-Za-z0-9][\w.+-]*")


@lru_cache(maxsize=4)
def _centroids(model_name: str) -> tuple[tuple[str, ...], np.ndarray]:
    names = tuple(INTENT_EXAMPLES)
    rows = []
    for name in names:
        vectors = embed_texts(list(INTENT_EXAMPLES[name]))
        centroid = vectors.mean(axis=0)
        rows.append(centroid / np.linalg.norm(centroid))
    return names, np.vstack(rows)


def classify_intent(vector: np.ndarray, model_name: str) -> tuple[str, dict[str, float]]:
    names, matrix = _centroids(model_name)
    sims = matrix @ vector
    scores = {name: round(float(s), 4) for name, s in zip(names, sims, strict=True)}
    return names[int(np.argmax(sims))], scores


def keywords(text: str) -> tuple[str, ...]:
    return tuple(w for w in WORD.findall(text.lower()) if w not in STOP and len(w) > 1)


def find_entities(text: str, known_tags: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Identifiers, file paths, quoted phrases, and known tag names named in the query."""
    paths = tuple(dict.fromkeys(FILE_PATH.findall(text)))
    phrases = tuple(dict.fromkeys(a or b for a, b in QUOTED.findall(text)))
    identifiers = tuple(dict.fromkeys(i for i in IDENTIFIER.findall(text) if i not in paths))
    lowered = " " + re.sub(r"[^a-z0-9]+", " ", text.lower()) + " "
    tags = tuple(
        t
        for t in known_tags
        if len(t) > 2 and f" {re.sub(r'[^a-z0-9]+', ' ', t.lower()).strip()} " in lowered
    )
    return {"identifiers": identifiers, "paths": paths, "phrases": phrases, "tags": tags}


# Questions that name the reason they ask for: "why", "how come", "is there a reason", "the
# thinking behind", "because of what", "where did X come from". They decide first, so "why did
# the outage change the plan" stays a why-question whatever else it says.
REASON_QUESTION = re.compile(
    r"\bwhy\b|\bhow\s+come\b|\breason(?:s|ing)?\b|\brationale\b|\bmotivation\s+(?:for|behind)\b"
    r"|\b(?:story|thinking|logic|idea|history|background|context)\s+behind\b"
    r"|\bwhat(?:\s+(?:was|is|were|are)|['’]s)\s+behind\b|\bbecause\s+of\s+what\b"
    r"|\bwhere\s+(?:did|does|do)\s+.+?\s+come\s+from\b"
    r"|\bwhat(?:\s+(?:was|is)|['’]s)\s+the\s+(?:cause|basis|justification|explanation)\b",
    re.IGNORECASE,
)
# Questions about what followed, one way of asking per line. Checked before CAUSE_QUESTION,
# whose "what caused" / "what led to" these do not match ("what did X cause" puts the subject
# between "what" and the verb).
_WHAT_DID = r"\bwhat\s+(?:did|do|does|has|have|had|will|would)\s+"
_SUBJECT = r"(?:\w[\w'’-]*\s+){1,4}?"
_AFTER_EVENT = r"(?:after|once|following|because\s+of|in\s+response\s+to|as\s+a\s+result)"
_FOLLOWED = (
    # what did the Jenkins outage lead to / cause / change
    _WHAT_DID + r".+?\s+(?:cause|lead\s+to|led\s+to|result\s+in|bring\s+about|trigger|change)\b",
    # what followed / came of / happened after / changed since
    r"\bwhat\s+(?:followed|came|resulted|happened)\s+(?:from|of|out\s+of|after|because\s+of)\b",
    r"\bwhat\s+(?:followed|came\s+next|happened\s+next)\b",
    r"\bwhat\s+changed\b[^?]*?\b(?:after|since|following|once|because)\b",
    r"\bwhat\s+(?:changed|happened)\s+(?:next|then|afterwards?|with\s+(?:that|it|this|those)"
    r"|as\s+a\s+result|in\s+response|because)\b",
    # "..., what happened?", "Then what?", "So what happened next?"
    r"\bwhat\s+happened\s*(?:[?.!]|$)|\bthen\s+what\b",
    # did anything come of it / change / happen; did it lead anywhere / to anything
    r"\b(?:come|came|coming)\s+(?:of|out\s+of)\s+(?:it|that|this|them|those)\b",
    r"\b(?:lead|led|go|went)\s+(?:anywhere|to\s+anything|to\s+something)\b",
    r"\b(?:anything|something)\s+(?:change|changed|happen|happened|come)\b",
    r"\b(?:act|acted|follow\s+up|followed\s+up)\s+on\s+(?:it|that|this|those|them)\b",
    # the outcome / result / fallout / response
    r"\b(?:consequences?|effects?|outcomes?|results?|upshot|impact)\s+of\b|\bfallout\s+(?:of|from)\b",
    r"\bwhat(?:\s+(?:was|were|is|are)|['’]s)\s+(?:the\s+)?(?:outcome|upshot|response|reaction"
    r"|follow[- ]?up|results?|consequences?|effects?|impact|fallout)\b",
    r"\bwhat\s+(?:did|do)\s+"
    + _SUBJECT
    + r"do\s+with\s+(?:the|that|those)\s+(?:results?|findings?)\b",
    # what was done / decided; what did we end up doing
    r"\bwhat\s+(?:was|were|has\s+been|got|gets|is)\s+(?:done|decided|changed|put\s+in\s+place)\b",
    r"\bend(?:ed)?\s+up\s+(?:causing|leading\s+to|changing|bringing\s+about|doing)\b",
    # what did we / facilities / the mobile team do about it, do or put in place after it
    _WHAT_DID + _SUBJECT + r"(?:do|done|change|changed)\s+(?:about|then|next|in\s+response)\b",
    r"\bwhat\s+(?:did|has|have|had)\s+"
    + _SUBJECT
    + r"(?:do|done|change|changed|put\s+in\s+place|introduce|introduced"
    r"|set\s+up|decide|decided)\b[^?]*?\b" + _AFTER_EVENT + r"\b",
    _WHAT_DID + r"(?:we|you|they|the\s+team)\s+(?:do|done|change|changed)\s+when\b",
    # what did finance decide; what did the review find / turn up / dig up
    _WHAT_DID + _SUBJECT + r"(?:decide|decided|conclude|concluded|come\s+up\s+with"
    r"|(?:turn|turned|dig|dug)\s+up)\b",
    _WHAT_DID + _SUBJECT + r"(?:find|found|learn|learned|learnt|discover|discovered)"
    r"\s+(?:from|when|once|after|out)\b",
    _WHAT_DID + r"(?:the\s+)?(?:\w+\s+){0,3}?(?:investigation|review|audit|analysis|postmortem"
    r"|post-mortem|retro|retrospective|study|test|experiment|pilot)\b[^?]*?\b(?:find|show|reveal"
    r"|turn\s+up|conclude)\b",
    # An event first, then the question: "Once the audit came back, what did platform do?",
    # "The CFO wanted CI cost halved - what did engineering actually do?"
    r"^\s*(?:after|once|when|given|following)\b[^?]+,\s*what\s+(?:did|was|were|has|have|changed|happened)\b",
    r"[—–:-]\s*(?:so\s+)?what\s+(?:did|was|were)\s+" + _SUBJECT + r"(?:do|did|done|decide|decided"
    r"|change|changed)\b",
)
EFFECT_QUESTION = re.compile("|".join(_FOLLOWED), re.IGNORECASE)
CAUSE_QUESTION = re.compile(
    r"\bwhat\s+(?:caused|prompted|motivated|drove|triggered|sparked)\b"
    r"|\bwhat\s+(?:led|leads)\s+(?:(?:us|you|them|me|the\s+team)\s+)?to\b"
    r"|\bwhat\s+made\s+(?:us|you|them|we)\b",
    re.IGNORECASE,
)


def causal_direction(text: str) -> str | None:
    """ "cause" for a why-question (why, how come, the reason, the thinking behind, what led
    (us) to, what prompted, what caused), "effect" for a question about what followed (what did
    X lead to, what came of it, what was the outcome, what did we do about), and for a question
    none of these wordings match, what the learned reading says (question_kind.py); None for
    any other query: only these two pay for the why path."""
    return worded_direction(text) or learned_direction(text)


def worded_direction(text: str) -> str | None:
    """The direction the wording lists alone read (a reason named first)."""
    if REASON_QUESTION.search(text):
        return CAUSE
    if EFFECT_QUESTION.search(text):
        return EFFECT
    if CAUSE_QUESTION.search(text):
        return CAUSE
    return None


AUXILIARY = r"(?:does|did|do|is|was|were|are|has|have|had|would|will|can|could|might|should)"


def subject_of(text: str, tags: tuple[str, ...]) -> str | None:
    """Of two or more tag names in the query, the one it asks about: "What did Alice say about
    Bob's store?" is about Alice (after the verb; Bob is only a possessive). None when the
    query names one tag, pairs them ("Alice and Bob") or no single one stands out."""
    if len(tags) < 2:
        return None
    names = "|".join(re.escape(t) for t in tags)
    if re.search(rf"\b({names})\s+(?:and|&)\s+({names})\b", text, re.IGNORECASE):
        return None
    leading = [
        t
        for t in tags
        if re.search(rf"(?:\b{AUXILIARY}\s+|^\s*){re.escape(t)}\b", text, re.IGNORECASE)
    ]
    if not leading:
        owned = {t for t in tags if re.search(rf"\b{re.escape(t)}'s\b", text, re.IGNORECASE)}
        leading = [t for t in tags if t not in owned]
    return leading[0] if len(leading) == 1 else None


def analyse_query(
    text: str,
    *,
    vector: np.ndarray | None,
    model_name: str,
    known_tags: Iterable[str] = (),
    now: datetime,
    enabled: bool = True,
    entities: dict[str, tuple[str, ...]] | None = None,
) -> QueryAnalysis:
    """`entities`: find_entities(text, known_tags) when the caller has it already."""
    words = keywords(text)
    first = text.strip().lower().split(" ", 1)[0] if text.strip() else ""
    is_question = first in QUESTION_WORDS or text.strip().endswith("?")
    causal = causal_direction(text)
    if not enabled:
        return QueryAnalysis(text=text, keywords=words, is_question=is_question, causal=causal)
    intent, scores = "lookup", dict[str, float]()
    if vector is not None:
        intent, scores = classify_intent(vector, model_name)
    found = entities if entities is not None else find_entities(text, known_tags)
    after = before = None
    phrase = find_time_phrase(text)
    if phrase:
        try:
            parsed = parse_time_expression(phrase, now)
        except TimeOutOfRange:  # words in a query narrow nothing they cannot name safely
            parsed = None
        if parsed is not None:
            after, before = parsed.after, parsed.before
    if first == "when" or (phrase and intent not in ("relation",)):
        intent = "temporal" if first == "when" or phrase else intent
    return QueryAnalysis(
        text=text,
        intent=intent,
        intent_scores=scores,
        entities=found["identifiers"] + found["paths"] + found["phrases"] + found["tags"],
        tag_entities=found["tags"],
        file_paths=found["paths"],
        phrases=found["phrases"],
        keywords=words,
        is_question=is_question,
        after=after,
        before=before,
        time_phrase=phrase,
        asks_when=bool(ASKS_WHEN.match(text)),
        subject=subject_of(text, found["tags"]),
        causal=causal,
    )
