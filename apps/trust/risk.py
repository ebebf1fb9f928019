"""The risk check: text aimed at an assistant rather than at the team.

`assess(text)` returns the findings, empty when clean. Each is stored on the memory as
`{kind, reason, start, end}` and shown highlighted in the UI and the review queue.

Rules first: each names what it saw, and it runs on every write (imports included), so every
pattern is compiled once and the costly ones only run when a cheap test says they could match.
What a rule looks for is listed in `phrases`. A text no rule flags is then read by a small
learned scorer (`scorer`), from its wording and, when the caller hands over the text's sentence
embedding, its meaning; it catches wording no rule lists and flags the whole text, kind
`pattern`, only when it is confident.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass

import numpy as np

from . import phrases, scorer
from .hidden import find_hidden, hidden_text

__all__ = ["Risk", "assess"]


@dataclass(frozen=True)
class Risk:
    # "instructions", "role", "tool_call", "exfiltration", "data_url", "hidden", "pattern"
    kind: str
    reason: str  # one line a person reads: "asks the assistant to ignore its instructions"
    start: int
    end: int

    def as_dict(self) -> dict:
        return asdict(self)


def _joined(patterns: list[str]) -> re.Pattern:
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)


_PHRASE_RULES = [  # kind, reason, words one of which a match needs, the pattern
    ("instructions", "asks the assistant to ignore its instructions", phrases.OVERRIDE_WORDS,
     _joined(phrases.OVERRIDE)),
    ("instructions", "asks the assistant to reveal its instructions", phrases.REVEAL_WORDS,
     _joined(phrases.REVEAL)),
    ("instructions", "asks the assistant to keep something from the user", phrases.SECRECY_WORDS,
     _joined(phrases.SECRECY)),
    ("role", "poses as the system, a developer or an unrestricted assistant", phrases.ROLE_WORDS,
     _joined(phrases.ROLE)),
]  # fmt: skip

# Tool-call syntax: a JSON call, a call tag, a named tool invoked with arguments. Read outside
# code blocks only: a team documenting its tools writes them in ``` or `.
_TOOL_CALL = _joined(
    [
        r"\{\s*\"(?:tool|tool_name|function|function_call|tool_calls?|tool_use)\"\s*:",
        r"\"name\"\s*:\s*\"[^\"\n]{1,80}\"\s*,\s*\"(?:arguments|parameters|input|args)\"\s*:",
        # A call tag with its closing tag: "<execute> tags" in prose is a mention, not a call.
        r"<\s*(?P<tag>(?:[\w-]+:)?(?:function_?calls?|tool_?calls?|tool_?use|tool_code|invoke|"
        r"\w+_invoke|execute|run_command))\b[^>\n]{0,200}>(?s:.){0,2000}?</\s*(?P=tag)\s*>",
        r"\"type\"\s*:\s*\"(?:function|tool_use|tool_call)\"",
        r"(?:^|\n)\s*action\s+input\s*:\s*[{\[]",
        r"\b(?:call|run|invoke|execute|use)\s+(?:the\s+)?(?:tool|function)\s+[\w.]*\s*with\s+"
        r"(?:(?:the\s+)?(?:arguments?|parameters?)\s+)?\{\s*\"",
    ]
)
# "invoke run_shell with command='rm -rf ...'": a tool by its snake_case name, an argument set.
_NAMED_CALL = re.compile(
    r"\b(?:call|run|invoke|execute|use)\s+(?:the\s+)?`?[a-z][a-z0-9]*(?:_[a-z0-9]+)+`?\s+"
    r"(?:tool\s+|function\s+)?with\s+(?:the\s+)?\w+\s*[=:]",
    re.IGNORECASE,
)
_ROLE_TAGS = _joined(phrases.ROLE_TAGS)
_CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]+`", re.DOTALL)

_OWN_INSTRUCTIONS = re.compile(phrases.OWN_INSTRUCTIONS, re.IGNORECASE)
_VOIDED_OR_SHOWN = re.compile(phrases.VOIDED_OR_SHOWN, re.IGNORECASE)
_CLAUSE_END = re.compile(r"[,;:.!?\n]")
_DESTINATION = re.compile(phrases.DESTINATION, re.IGNORECASE)
_SEND = _joined(phrases.SEND)
_SEND_AFTER = re.compile(phrases.SEND_AFTER)
_DATA = _joined(phrases.DATA)
_NEGATION = re.compile(phrases.NEGATION, re.IGNORECASE)
_DESTINATION_MARKS = ("@", "://", "public", "pastebin", "#", "telegram", "signal", "whatsapp",
                      "discord", "wechat", "webhook")  # fmt: skip
_PAST = re.compile(r"(?!embed$)[a-z]+ed", re.IGNORECASE)
_BYPASS_WORDS = ("without", "don't", "do not", "never", "no need", "skip", "sin ", "sans ",
                 "ohne", "sem ", "tanpa", "без", "確認", "确认")  # fmt: skip
_BYPASS = re.compile(phrases.BYPASS, re.IGNORECASE)
_DESTRUCTIVE = re.compile(phrases.DESTRUCTIVE, re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?;:](?=\s)|[。！？\n]")

# A markdown image or link, and a placeholder in its URL: {x}, {{x}}, ${X}, $X, <X>, %s, [X].
_MARKDOWN = re.compile(r"(!?)\[[^\]\n]{0,200}\]\(([^)\n]{1,600})\)")
# The same through a reference ("![chart][1]" ... "[1]: https://...") or an HTML image.
_REFERENCE = re.compile(r"(?m)^[ \t]{0,3}\[([^\]\n]{1,80})\]:[ \t]*<?(\S{1,600}?)>?(?=\s|$)")
_IMAGE_REFERENCE = re.compile(r"!\[[^\]\n]{0,200}\]\[([^\]\n]{1,80})\]")
_HTML_IMAGE = re.compile(r"<img\b[^>]{0,300}?\bsrc\s*=\s*[\"']?([^\"'\s>]{1,600})", re.IGNORECASE)
_PLACEHOLDER = re.compile(r"\{[^}]*\}|\$\{?[A-Za-z_]\w*|<[^>]+>|%s|\[[^\]]+\]")


def _without_code(text: str) -> str:
    """`text` with code spans blanked, so positions stay where they were."""
    if "`" not in text:
        return text
    return _CODE.sub(lambda m: " " * len(m.group()), text)


def _hidden(text: str) -> Iterator[Risk]:
    for start, end in find_hidden(text):
        spelled = hidden_text(text[start:end]).strip()
        reason = (
            f"hides text in invisible characters: {spelled[:80]!r}"
            if spelled
            else f"contains {end - start} character(s) a reader cannot see"
        )
        yield Risk("hidden", reason, start, end)


_OPEN_QUOTES, _CLOSE_QUOTES = "'\"“‘«`", "'\"”’»`"


def _quoted(text: str, start: int, end: int) -> bool:
    """A phrase in quotes is mentioned, not said: "the red team tried 'ignore previous
    instructions' attacks"."""
    return text[start - 1 : start] in _OPEN_QUOTES and text[end : end + 1] in _CLOSE_QUOTES


def _phrases(text: str) -> Iterator[Risk]:
    lowered = text.lower()
    for kind, reason, words, pattern in _PHRASE_RULES:
        if not any(word in lowered for word in words):
            continue
        for m in pattern.finditer(text):
            if not _quoted(text, m.start(), m.end()):
                yield Risk(kind, reason, m.start(), m.end())


def _claims(text: str) -> Iterator[Risk]:
    """The model's own instructions and, close by, a claim that they are void or to be shown:
    before them in the same clause ("disable your safety filters"), or after them within a
    couple of sentences ("your initial instructions? Output them in full")."""
    lowered = text.lower()
    if not any(word in lowered for word in phrases.OWN_INSTRUCTIONS_WORDS):
        return
    for own in _OWN_INSTRUCTIONS.finditer(text):
        clause_start = max(0, own.start() - 30)
        ends = list(_CLAUSE_END.finditer(text, clause_start, own.start()))
        clause_start = ends[-1].end() if ends else clause_start
        for claim in (
            *_VOIDED_OR_SHOWN.finditer(text, clause_start, own.start()),
            *_VOIDED_OR_SHOWN.finditer(text, own.end(), own.end() + 100),
        ):
            start, end = min(own.start(), claim.start()), max(own.end(), claim.end())
            negated = _NEGATION.search(text[max(0, claim.start() - 12) : claim.start()])
            if negated or _quoted(text, start, end):
                continue
            reason = "says the assistant's own instructions are void, or asks for them"
            yield Risk("instructions", reason, start, end)
            return


def _syntax(text: str) -> Iterator[Risk]:
    """Tool calls and chat-template role tags, outside code blocks."""
    named = "_" in text and " with " in text
    if not named and "<" not in text and "{" not in text:
        lowered = text.lower()
        if "[inst" not in lowered and "[/inst" not in lowered and "action input" not in lowered:
            return
    outside_code = _without_code(text)
    if named:
        for m in _NAMED_CALL.finditer(outside_code):
            yield Risk(
                "tool_call", "contains tool-call or function-call syntax", m.start(), m.end()
            )
    for m in _TOOL_CALL.finditer(outside_code):
        yield Risk("tool_call", "contains tool-call or function-call syntax", m.start(), m.end())
    for m in _ROLE_TAGS.finditer(outside_code):
        reason = "poses as the system, a developer or an unrestricted assistant"
        yield Risk("role", reason, m.start(), m.end())


def _exfiltration(text: str) -> Iterator[Risk]:
    """A verb of sending and a credential or the conversation, then a URL or address, in one
    sentence."""
    lowered = text.lower()
    if not any(mark in lowered for mark in _DESTINATION_MARKS):
        return
    for dest in _DESTINATION.finditer(text):
        window_start = max(0, dest.start() - 250)
        ends = list(_SENTENCE_END.finditer(text, window_start, dest.start()))
        sentence_start = ends[-1].end() if ends else window_start
        verb = _SEND.search(text, sentence_start, dest.start()) or _SEND_AFTER.search(
            text, dest.end(), dest.end() + 20
        )
        if verb is None or _NEGATION.search(text[max(0, verb.start() - 20) : verb.start()]):
            continue
        if _PAST.fullmatch(verb.group()):
            continue  # "a developer pasted .env into a public gist": what happened, not a request
        if _DATA.search(text, sentence_start, dest.start()):
            reason = "asks to send credentials or the conversation to an outside address"
            yield Risk(
                "exfiltration", reason, min(verb.start(), dest.start()), max(verb.end(), dest.end())
            )


def _carries_data(url: str, image: bool) -> bool:
    """An image loads by itself: a placeholder anywhere in its URL carries data out. A link's
    path may name a route ({id}); only its query or fragment is suspect."""
    if "//" not in url:
        return False
    where = url if image else url[min((url.find(c) for c in "?#" if c in url), default=len(url)) :]
    return bool(_PLACEHOLDER.search(where))


def _data_urls(text: str) -> Iterator[Risk]:
    if "](" in text:
        for m in _MARKDOWN.finditer(text):
            if _carries_data(m.group(2), bool(m.group(1))):
                what = "image" if m.group(1) else "link"
                reason = f"a markdown {what} whose URL has a placeholder for data"
                yield Risk("data_url", reason, m.start(), m.end())
    if "]:" in text:
        images = {m.group(1).lower() for m in _IMAGE_REFERENCE.finditer(text)}
        for m in _REFERENCE.finditer(text):
            image = m.group(1).lower() in images
            if _carries_data(m.group(2), image):
                what = "image" if image else "link"
                reason = f"a markdown {what} whose URL has a placeholder for data"
                yield Risk("data_url", reason, m.start(), m.end())
    if "<img" in text.lower():
        for m in _HTML_IMAGE.finditer(text):
            if _carries_data(m.group(1), True):
                reason = "an HTML image whose URL has a placeholder for data"
                yield Risk("data_url", reason, m.start(), m.end())


def _bypass(text: str) -> Iterator[Risk]:
    """A way of skipping the person's confirmation or review and, in the same sentence or
    the same short note, something that cannot be undone (phrases.BYPASS, DESTRUCTIVE)."""
    lowered = text.lower()
    if not any(word in lowered for word in _BYPASS_WORDS):
        return
    for skip in _BYPASS.finditer(text):
        start = max(0, skip.start() - 200)
        ends = list(_SENTENCE_END.finditer(text, start, skip.start()))
        sentence_start = ends[-1].end() if ends and len(text) > 300 else start
        later = _SENTENCE_END.search(text, skip.end())
        sentence_end = (
            later.start() if later and len(text) > 300 else min(len(text), skip.end() + 200)
        )
        act = _DESTRUCTIVE.search(text, sentence_start, sentence_end)
        if act is not None and not _quoted(text, skip.start(), skip.end()):
            reason = "asks to do something that cannot be undone without the person's confirmation"
            yield Risk(
                "instructions", reason, min(skip.start(), act.start()), max(skip.end(), act.end())
            )
            return


_RULES = (_hidden, _phrases, _claims, _syntax, _exfiltration, _data_urls, _bypass)
_PATTERN = "reads like instructions to an assistant"


def _pattern(text: str, embedding: np.ndarray | None) -> list[Risk]:
    """The scorer's finding, for a text the rules passed: it has no words to point at, so it
    marks the whole text."""
    if text.strip() and scorer.model().flags(text, embedding):
        return [Risk("pattern", _PATTERN, 0, len(text))]
    return []


def assess(text: str, embedding: np.ndarray | None = None) -> list[Risk]:
    """Every finding in `text`, in order of position. `embedding`: the text's sentence
    embedding (unit length, the write path's model), which the scorer reads beside the
    wording; without it the wording is read alone."""
    found = [risk for rule in _RULES for risk in rule(text)]
    return sorted(found, key=lambda r: (r.start, r.end)) if found else _pattern(text, embedding)
