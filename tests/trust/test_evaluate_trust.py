"""The labelled sets meet their targets: guards the detectors against regressions. The
held-out sets were written after the train sets and never tuned on."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from lab import trust

pytestmark = pytest.mark.skipif(
    not (trust.LOCOMO / "memories.jsonl").exists(), reason="LoCoMo dev set not present"
)


@pytest.mark.parametrize("split", trust.SPLITS)
def test_every_score_meets_its_target(split, tmp_path):
    report_path = tmp_path / "report.json"
    args = ["--json", str(report_path)] + (["--heldout"] if split == "heldout" else [])
    out = StringIO()
    call_command("evaluate_trust", *args, stdout=out)
    report = json.loads(report_path.read_text())
    assert report["split"] == split
    assert set(report["scores"]) == set(trust.TARGETS)
    missed = [name for name, score in report["scores"].items() if not score["meets_target"]]
    assert missed == [], out.getvalue()
    assert report["scores"]["LoCoMo turns flagged"]["total"] == len(trust.locomo_turns())
    assert "us per LoCoMo turn" in out.getvalue()


def test_the_sets_are_the_size_they_claim():
    sizes = {
        (stem, split): len(trust.read_set(stem, split))
        for stem, _, _ in trust.SETS.values()
        for split in trust.SPLITS
    }
    minimum = {"injections": (60, 40), "benign": (60, 40), "secrets": (30, 15),
               "lookalikes": (60, 25)}  # fmt: skip
    for (stem, split), size in sizes.items():
        assert size >= minimum[stem][split == "heldout"], (stem, split, size)
