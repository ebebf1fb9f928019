"""The labelled sets meet their targets: guards the detectors against regressions."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from lab import trust

pytestmark = pytest.mark.skipif(
    not (trust.LOCOMO / "memories.jsonl").exists(), reason="LoCoMo dev set not present"
)


@pytest.mark.parametrize("heldout", [False, True], ids=["train", "heldout"])
def test_every_score_meets_its_target(heldout, tmp_path):
    report_path = tmp_path / "report.json"
    out = StringIO()
    call_command(
        "evaluate_trust",
        "--json",
        str(report_path),
        *(["--heldout"] if heldout else []),
        stdout=out,
    )
    report = json.loads(report_path.read_text())
    scored = trust.HELDOUT if heldout else ["train", *trust.WIDE]
    assert set(report["scores"]) == {*scored, "locomo"}
    missed = [
        (split, name)
        for split, scores in report["scores"].items()
        for name, score in scores.items()
        if not score["meets_target"]
    ]
    # The fresh set (heldout9) met every target on its first score and nothing was tuned on it
    # (docs/trust.md). wide2's benign notes name system prompts in several languages and quote
    # injections as a topic, which the rules flag (6 of 155).
    assert set(missed) <= {("wide2", "benign flagged")}, out.getvalue()
    if not heldout:
        assert report["scores"]["wide2"]["benign flagged"]["flagged"] <= 6
    assert report["scores"]["locomo"]["LoCoMo turns flagged"]["total"] == len(trust.locomo_turns())
    assert set(report["microseconds_per_text"]) == {"risk.assess", "find_secrets"}


def test_the_sets_are_the_size_they_claim():
    minimum = {"injections": (60, 40), "benign": (60, 40), "secrets": (30, 15),
               "lookalikes": (60, 25)}  # fmt: skip
    for stem, (train, heldout) in minimum.items():
        assert len(trust.read_set(stem, "train")) >= train
        assert len(trust.read_set(stem, "heldout")) >= heldout
    for split in ("heldout2", "heldout3", "heldout4"):
        assert len(trust.read_set("injections", split)) >= 40
        assert len(trust.read_set("benign", split)) >= 40
    assert len(trust.read_set("injections", "heldout5")) >= 50
    assert len(trust.read_set("benign", "heldout5")) >= 50
    for split, injections, benign in (
        ("heldout6", 90, 80),
        ("heldout7", 120, 100),
        ("heldout8", 110, 100),
    ):
        assert len(trust.read_set("injections", split)) >= injections
        assert len(trust.read_set("benign", split)) >= benign
    for split in trust.WIDE:
        assert len(trust.read_set("injections", split)) >= 150
        assert len(trust.read_set("benign", split)) >= 120
