"""docs/architecture.md is the map a newcomer reads before the code: it must name every app and
point only at files that exist, and it tells how the code is laid out, not how it was built."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAP = ROOT / "docs" / "architecture.md"
# A path in backticks that starts at a top-level package of the product.
PATH_MENTION = re.compile(r"`((?:apps|memoryhub)/[\w./-]*)`")
# How it was built belongs in the history (git log, the closing notes), not in the map.
STORY = re.compile(
    r"\bissue \d+|\b(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|"
    r"this|last|previous) session\b|\bengineers?\b|\bround \d+",
    re.IGNORECASE,
)


def _text() -> str:
    return MAP.read_text(encoding="utf-8")


def test_the_map_names_every_app():
    apps = sorted(p.parent.name for p in (ROOT / "apps").glob("*/__init__.py"))
    missing = [name for name in apps if f"`apps/{name}`" not in _text()]
    assert not missing, f"docs/architecture.md has no line for: {missing}"


def test_every_path_on_the_map_exists():
    # `pipeline/x.py` style mentions are relative to the app named before them; only paths
    # from the top are checked here.
    gone = [p for p in PATH_MENTION.findall(_text()) if not (ROOT / p.rstrip("/")).exists()]
    assert not gone, f"docs/architecture.md points at files that do not exist: {gone}"


def test_the_map_tells_no_story():
    told = [m.group(0) for m in STORY.finditer(_text())]
    assert not told, f"docs/architecture.md tells how it was built: {told}"
