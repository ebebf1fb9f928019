"""The two documents a newcomer reads first stay short enough to read: the README and the
benchmark summary. Details belong in docs/ (benchmark-details.md, using.md, ...)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("document", "most"), [("README.md", 400), ("docs/benchmarks.md", 800)])
def test_the_first_documents_stay_short(document, most):
    lines = (ROOT / document).read_text(encoding="utf-8").count("\n")
    assert lines <= most, f"{document} has {lines} lines (at most {most}): move details to docs/"
