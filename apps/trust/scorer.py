"""A learned second opinion beside the rules: does this text read like instructions to an
assistant?

Two logistic regressions, read together by adding their log-odds:

- the wording: hashed features of the normalised text, character 3- to 5-grams and words and
  word pairs, each count scaled by one over the square root of the number of features (long
  texts do not score higher for being long);
- the meaning: the text's sentence embedding (all-MiniLM-L6-v2, 384 numbers of unit length),
  which the write path computes for every memory anyway and hands over. It reads a paraphrase
  or another language close to what it was fitted on even when no word is shared.

Rules name what they saw; this catches wording no rule lists (paraphrases, other languages,
homoglyphs). Without a vector (a command scanning text, a preview) the wording is read alone,
against a threshold of its own. The weights are built by `python manage.py fit_trust`
(lab/trust_fit.py) and kept in `scorer_weights.npz` beside this file; `features` is shared with
that command so training and scoring see the same numbers.

Long texts are scored in overlapping windows and the highest wins, so a paragraph aimed at an
assistant inside a long note is not diluted by the rest; the embedding is of the whole text.
"""

from __future__ import annotations

import math
import re
import unicodedata
from functools import cache
from pathlib import Path

import numpy as np

from .hidden import strip_hidden

__all__ = ["WEIGHTS", "Model", "features", "linear_logit", "model", "probability", "windows"]

WEIGHTS = Path(__file__).with_name("scorer_weights.npz")
BITS = 16  # 65,536 buckets: 128 KB of float16 weights
WINDOW, STRIDE = 400, 300

# Latin look-alikes from Cyrillic and Greek, read as Latin only inside a word that also has
# Latin letters ("іnstruct" with a Cyrillic i); a Russian word keeps its letters.
_CONFUSABLES = str.maketrans("асеорхуіјѕкмнтвαοειικνρτυχ", "aceopxyijskmhtbaoeiikvptux")
_LEET = re.compile(r"(?<=[a-z])[013457]|[013457](?=[a-z])")
_LEET_MAP = str.maketrans("013457", "oieast")
_SPACED = re.compile(r"\b(?:[a-z] ){3,}[a-z]\b")  # "i g n o r e"
_WORD = re.compile(r"\w+")
_LATIN = re.compile("[a-z]")
_DIGIT = re.compile("[013457]")
_SINGLE = re.compile(r"\b[a-z] [a-z] [a-z] ")
_MIX = np.uint64(0x9E3779B97F4A7C15)
_WORD_SALT = np.uint64(0x5BD1E995)


def _latin_lookalikes(word: str) -> str:
    if word.isascii() or not _LATIN.search(word):
        return word
    return word.translate(_CONFUSABLES)


def normalised(text: str) -> str:
    """Lower case, hidden characters gone, full-width and styled letters folded (NFKC),
    look-alike letters and digits read as the letters they stand for, spaced-out words joined."""
    if text.isascii():
        text = text.lower()
    else:
        text = unicodedata.normalize("NFKC", strip_hidden(text)).lower()
        text = _WORD.sub(lambda m: _latin_lookalikes(m.group()), text)
    if _DIGIT.search(text):
        text = _LEET.sub(lambda m: m.group().translate(_LEET_MAP), text)
    if _SINGLE.search(text):
        text = _SPACED.sub(lambda m: m.group().replace(" ", ""), text)
    return " ".join(text.split())


def _powers(length: int) -> tuple[np.ndarray, np.ndarray]:
    """P**i and its inverse modulo 2**64 (P is odd, so it has one), for i < length."""
    one = np.ones(1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        powers = np.cumprod(np.concatenate([one, np.full(length - 1, _P, dtype=np.uint64)]))
        inverse = np.cumprod(
            np.concatenate([one, np.full(length - 1, _P_INVERSE, dtype=np.uint64)])
        )
    return powers, inverse


_P = np.uint64(1000003)
_P_INVERSE = np.uint64(pow(1000003, -1, 1 << 64))
_POWERS, _INVERSE = _powers(WINDOW + 8)


def _span_hashes(prefix: np.ndarray, starts: np.ndarray, ends: np.ndarray, inverse) -> np.ndarray:
    """A hash of text[start:end] for each span that does not depend on where the span is."""
    return (prefix[ends] - prefix[starts]) * inverse[starts] + (ends - starts).astype(np.uint64)


def _word_table() -> np.ndarray:
    return np.array([bool(_WORD.match(chr(i))) for i in range(1 << 16)] + [False])


_IS_WORD = _word_table()  # \w for each code point of the basic plane; others are not words
_POSITIONS = np.arange(WINDOW + 8, dtype=np.int64)


def features(text: str) -> np.ndarray:
    """The bucket of each feature of an already normalised text, repeats kept (counts):
    character 3- to 5-grams (the text padded with a space each side), words, word pairs."""
    padded = f" {text} ".ljust(5)
    raw = np.frombuffer(padded.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    codes = raw.astype(np.uint64)
    n = len(codes)
    if n + 1 <= len(_POSITIONS):
        (powers, inverse), positions = (_POWERS, _INVERSE), _POSITIONS
    else:
        (powers, inverse), positions = _powers(n + 1), np.arange(n + 1, dtype=np.int64)
    word = _IS_WORD[np.minimum(raw, 1 << 16)]
    # The padding spaces mean the first and last characters are never part of a word.
    edges = np.flatnonzero(word[1:] != word[:-1]) + 1
    word_starts, word_ends = edges[::2], edges[1::2]
    starts = np.concatenate(
        [positions[: n - 2], positions[: n - 3], positions[: n - 4], word_starts, word_starts[:-1]]
    )
    ends = np.concatenate(
        [positions[3 : n + 1], positions[4 : n + 1], positions[5 : n + 1], word_ends, word_ends[1:]]
    )
    prefix = np.zeros(n + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        np.cumsum(codes * powers[:n], out=prefix[1:])
        hashed = _span_hashes(prefix, starts, ends, inverse)
        hashed[3 * n - 9 :] ^= _WORD_SALT
        return ((hashed * _MIX) >> np.uint64(64 - BITS)).astype(np.int64)


def linear_logit(weights: np.ndarray, bias: float, buckets: np.ndarray) -> float:
    """A logistic regression's log-odds over `features`: each count scaled by one over the
    square root of the number of features, as the fit scales them (lab/trust_fit.matrix)."""
    if not len(buckets):
        return bias
    return bias + float(weights[buckets].sum()) / math.sqrt(len(buckets))


def windows(text: str) -> list[str]:
    if len(text) <= WINDOW:
        return [text]
    return [text[i : i + WINDOW] for i in range(0, len(text) - WINDOW + STRIDE, STRIDE)]


class Model:
    """`threshold` is for the wording alone; `joint_threshold` for wording and meaning added."""

    def __init__(
        self,
        weights: np.ndarray,
        bias: float,
        threshold: float,
        meaning: np.ndarray | None = None,
        meaning_bias: float = 0.0,
        joint_threshold: float = 1.0,
    ):
        self.weights = weights.astype(np.float32)
        self.bias = bias
        self.threshold = threshold
        self.meaning = None if meaning is None else meaning.astype(np.float32)
        self.meaning_bias = meaning_bias
        self.joint_threshold = joint_threshold

    def logit(self, normalised_text: str) -> float:
        return linear_logit(self.weights, self.bias, features(normalised_text))

    def wording_logit(self, text: str) -> float:
        """The highest window's log-odds from the wording."""
        return max(self.logit(part) for part in windows(normalised(text)))

    def meaning_logit(self, embedding: np.ndarray) -> float:
        return self.meaning_bias + float(np.dot(self.meaning, embedding))

    def probability(self, text: str, embedding: np.ndarray | None = None) -> float:
        """The probability that `text` is aimed at an assistant: from the wording and, given
        the text's embedding, its meaning."""
        best = self.wording_logit(text)
        if embedding is not None and self.meaning is not None:
            best += self.meaning_logit(np.asarray(embedding, dtype=np.float32))
        return 1.0 / (1.0 + math.exp(-best))

    def threshold_for(self, embedding: np.ndarray | None) -> float:
        return self.threshold if embedding is None or self.meaning is None else self.joint_threshold

    def flags(self, text: str, embedding: np.ndarray | None = None) -> bool:
        return self.probability(text, embedding) >= self.threshold_for(embedding)


@cache
def model() -> Model:
    with np.load(WEIGHTS) as saved:
        return Model(
            saved["weights"],
            float(saved["bias"]),
            float(saved["threshold"]),
            saved["meaning"],
            float(saved["meaning_bias"]),
            float(saved["joint_threshold"]),
        )


def probability(text: str, embedding: np.ndarray | None = None) -> float:
    return model().probability(text, embedding)
