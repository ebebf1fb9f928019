"""The learned reading of question kinds: wordings no list in analyse.py names are read as why-
or what-followed questions, ordinary team questions are not, and the fit that built the shipped
weights still cross-validates as docs/benchmarks.md says. The questions here are our own."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from apps.search.pipeline.analyse import causal_direction, worded_direction
from apps.search.pipeline.question_kind import CAUSE, EFFECT, learned_direction


def _missed(query: str, direction: str):
    return pytest.param(
        query,
        direction,
        marks=pytest.mark.xfail(strict=True, reason="the learned reading scores it under"),
    )


# Our own wordings, none in any labelled set; the four it misses are kept as known misses.
@pytest.mark.parametrize(
    ("query", "direction"),
    [
        ("How did we land on Postgres over Mongo?", CAUSE),
        ("The 2FA requirement for contractors - what brought that on?", CAUSE),
        ("What made the team go with Kafka?", CAUSE),
        ("What was the thinking with the new pricing tiers?", CAUSE),
        ("Did the outage post-mortem produce any action items?", EFFECT),
        ("The SOC2 audit findings - any changes since?", EFFECT),
        ("After the layoffs, how did the roadmap shift?", EFFECT),
        ("What became of the proposal to drop Safari 14?", EFFECT),
        ("How did customers react to the price change?", EFFECT),
        ("Where did the churn analysis lead us?", EFFECT),
        ("The supplier's price hike last spring - what did that set off?", EFFECT),
        ("Was there any follow-through on the accessibility audit?", EFFECT),
        ("The data-retention complaint from the Dutch customer, where did that go?", EFFECT),
        _missed("What's the story with the 90-day password expiry?", CAUSE),
        _missed("The staging freeze on Thursdays, what's that about?", CAUSE),
        _missed("What's the backstory on the Friday deploy freeze?", CAUSE),
        _missed("Who pushed for the monorepo, and on what grounds?", CAUSE),
    ],
)
def test_wordings_the_lists_miss_are_read_by_the_learned_part(query, direction):
    assert worded_direction(query) is None
    assert learned_direction(query) == direction
    assert causal_direction(query) == direction


@pytest.mark.parametrize(
    "query",
    [
        "Who owns the billing service?",
        "Where are the deploy keys stored?",
        "What port does Redis listen on in staging?",
        "When is the next release?",
        "Which team maintains the Android app?",
        "What did Ana say in the retro?",
        "kubernetes ingress timeout",
    ],
)
def test_ordinary_questions_are_not_causal(query):
    assert causal_direction(query) is None


def test_the_fit_cross_validates_as_documented():
    out = StringIO()
    call_command("fit_question_kinds", "--cv-only", stdout=out)
    line = next(x for x in out.getvalue().splitlines() if x.startswith("threshold"))
    found = float(line.split("causal found ")[1].split("%")[0])
    others = float(line.split("others taken ")[1].split("%")[0])
    assert found >= 90.0, line
    assert others <= 2.0, line
