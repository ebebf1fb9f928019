"""The strict packages have no mypy error to hide: none of their files is in the baseline that
`make typecheck` lets through (the rest of the code may only shrink its list there)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# A package made strict before it is annotated: its errors stay in the baseline until it has
# none, then it leaves this list (apps/vectors and apps/transfer did, issue 45).
NOT_YET_STRICT: tuple[str, ...] = ()


def _strict_prefixes() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    strict = [o for o in config["tool"]["mypy"]["overrides"] if o.get("disallow_untyped_defs")]
    return [m.removesuffix(".*").replace(".", "/") + "/" for o in strict for m in o["module"]]


def test_the_strict_packages_are_named():
    strict = {"apps/search/", "apps/memories/services/", "apps/vectors/", "apps/transfer/"}
    assert strict <= set(_strict_prefixes())
    assert set(NOT_YET_STRICT) <= set(_strict_prefixes())


def test_no_strict_module_is_in_the_baseline():
    listed = (ROOT / "mypy-baseline.txt").read_text(encoding="utf-8").splitlines()
    prefixes = tuple(p for p in _strict_prefixes() if p not in NOT_YET_STRICT)
    hidden = [line for line in listed if line.startswith(prefixes)]
    assert not hidden, "errors in strict packages are fixed, never baselined:\n" + "\n".join(hidden)
