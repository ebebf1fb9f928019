"""The map of the code holds: doors over domain apps over core, the domain apps in one direction,
no circle between the modules of a package, and the product never imports the tooling.

The contracts live in pyproject.toml ([tool.importlinter]) and `make lint` checks them too; this
test runs the same check so CI fails on a broken one. import-linter counts every import, at
module level or inside a function: a function-local import defers the loading, but the module
still needs the other one to work.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint_imports(*args: str, cwd: Path = ROOT, env: dict | None = None):
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_import_contracts_are_kept():
    result = _lint_imports()
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


def test_the_check_sees_a_circle_through_a_function_local_import(tmp_path):
    package = tmp_path / "shop"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "orders.py").write_text("from shop import stock\n")
    (package / "stock.py").write_text("def reserve():\n    from shop import orders\n")
    config = tmp_path / "contracts.ini"
    config.write_text(
        "[importlinter]\nroot_package = shop\n\n"
        "[importlinter:contract:acyclic]\nname = No circles\ntype = acyclic_siblings\n"
        "ancestors = shop\n"
    )
    result = _lint_imports("--config", str(config), cwd=tmp_path, env={"PYTHONPATH": str(tmp_path)})
    assert result.returncode == 1
    assert "No cycles are allowed in shop" in result.stdout
