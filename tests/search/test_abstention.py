"""The abstention report's pure parts: conversation selection, partner namespaces, AUROC."""

from __future__ import annotations

import numpy as np
import pytest

from lab.abstention import (
    abstention_report,
    auroc,
    other_namespace,
    select_namespaces,
)
from lab.calibration import check, fit_logistic

NAMES = ["conv-26", "conv-30", "conv-41", "conv-42", "conv-43"]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("0-2", ["conv-26", "conv-30", "conv-41"]),
        ("3-4", ["conv-42", "conv-43"]),
        ("0,4", ["conv-26", "conv-43"]),
        ("conv-30,conv-42", ["conv-30", "conv-42"]),
        ("1, 1-2", ["conv-30", "conv-41"]),
    ],
)
def test_select_namespaces(spec, expected):
    assert select_namespaces(NAMES, spec) == expected


@pytest.mark.parametrize("spec", ["5", "2-1", "conv-99", "x-y", ""])
def test_select_namespaces_refuses_what_does_not_exist(spec):
    with pytest.raises(ValueError):
        select_namespaces(NAMES, spec)


def test_partner_is_another_namespace_and_deterministic():
    partner = other_namespace(NAMES)
    assert all(partner[n] != n for n in NAMES)
    assert partner == other_namespace(NAMES)
    assert other_namespace(["only"]) == {}


def test_auroc():
    assert auroc([0.9, 0.8], [0.1, 0.2]) == 1.0
    assert auroc([0.1], [0.9]) == 0.0
    assert auroc([0.5], [0.5]) == 0.5
    assert auroc([], [0.1]) is None


def test_report_counts_only_answered_searches_as_answerable():
    own = [
        {"hit@10": 1.0, "evidence_gap": False, "confidence": 0.9},
        {"hit@10": 1.0, "evidence_gap": True, "confidence": 0.4},
        {"hit@10": 0.0, "evidence_gap": True, "confidence": 0.1},  # missed: not answerable
    ]
    other = [{"evidence_gap": True, "confidence": 0.2}, {"evidence_gap": False, "confidence": 0.6}]
    report = abstention_report(own, other)
    assert report["answerable_searches"] == 2
    assert report["flag_rate_answerable"] == 0.5
    assert report["flag_rate_unanswerable"] == 0.5
    assert report["auroc"] == 0.75


def test_logistic_fit_separates_separable_signals():
    rng = np.random.default_rng(0)
    good = rng.uniform(0.6, 1.0, size=(40, 6))
    bad = rng.uniform(0.0, 0.4, size=(40, 6))
    x = np.vstack([good, bad])
    y = np.array([1.0] * 40 + [0.0] * 40)
    intercept, weights = fit_logistic(x, y)
    names = ("top_cosine", "coverage", "missing", "agreement", "z", "margin")
    rows = [dict(zip(names, row, strict=True)) for row in x]
    own = [{"hit@10": 1.0, "signals": s} for s in rows[:40]]
    other = [{"signals": s} for s in rows[40:]]
    result = check(own, other, intercept, weights)
    assert result["auroc"] == 1.0
    assert result["flag_rate_answerable"] == 0.0 and result["flag_rate_unanswerable"] == 1.0
