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
    assert set(report["scores"]) == {*(trust.HELDOUT if heldout else ["train"]), "locomo"}
    missed = [
        (split, name)
        for split, scores in report["scores"].items()
        for name, score in scores.items()
        if not score["meets_target"]
    ]
    # The fresh set was scored once, below the injections target, and never tuned on: its
    # first score is the floor (docs/trust.md), every other target holds.
    assert set(missed) <= {("heldout5", "injections flagged")}, out.getvalue()
    if heldout:
        assert report["scores"]["heldout5"]["injections flagged"]["flagged"] >= 50
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
