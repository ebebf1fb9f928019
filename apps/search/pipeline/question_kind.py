"""A learned reading of whether a question asks why or what followed, for the questions the
wording lists in analyse.py do not recognise.

People ask "what's the deal with the 14-day rule", "on what basis", "any follow-up on that",
"did that survey actually change anything": more ways than a list of phrasings holds. Two
logistic regressions over the hashed wording features the risk check uses (character 3- to
5-grams, words and word pairs of the normalised text, apps/trust/scorer.py):

- causal: does the question ask for a reason or a consequence at all (against every other
  question: facts, lookups, "when did we decide", "what did Ana say in the retro");
- effect: of the causal ones, does it ask what followed rather than why.

The weights are built by `python manage.py fit_question_kinds` (lab/question_kinds.py) from
labelled questions written for fitting, the decision-chain questions of the why benchmark's
fitted collections and the LoCoMo dev questions, with the causal threshold chosen by
cross-validation so that few ordinary questions pay for the why path.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from apps.trust.scorer import features, linear_logit, normalised

WEIGHTS = Path(__file__).with_name("question_kind_weights.npz")
CAUSE, EFFECT = "cause", "effect"


@dataclass(frozen=True)
class QuestionKinds:
    causal: np.ndarray
    causal_bias: float
    threshold: float
    effect: np.ndarray
    effect_bias: float

    def probabilities(self, text: str) -> tuple[float, float]:
        """(the question asks why or what followed, given that: it asks what followed)."""
        buckets = features(normalised(text))
        causal = linear_logit(self.causal, self.causal_bias, buckets)
        effect = linear_logit(self.effect, self.effect_bias, buckets)
        return _sigmoid(causal), _sigmoid(effect)

    def direction(self, text: str) -> str | None:
        causal, effect = self.probabilities(text)
        if causal < self.threshold:
            return None
        return EFFECT if effect >= 0.5 else CAUSE


def _sigmoid(logit: float) -> float:
    return 0.5 * (1.0 + math.tanh(logit / 2))  # never overflows, unlike 1 / (1 + exp(-x))


@cache
def model() -> QuestionKinds:
    with np.load(WEIGHTS) as saved:
        return QuestionKinds(
            saved["causal"].astype(np.float32),
            float(saved["causal_bias"]),
            float(saved["threshold"]),
            saved["effect"].astype(np.float32),
            float(saved["effect_bias"]),
        )


def learned_direction(text: str) -> str | None:
    return model().direction(text)
