"""Tooling stays out of the product: evaluation, calibration, ablation and the bench commands
live in lab/, no product module imports them, the production settings leave them out, and
runtime code carries no experiment history."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("apps", "memoryhub")
TOOLING_NAME = re.compile(r"bench|evaluat|calibrat|ablat|abstention", re.IGNORECASE)
ISSUE_REFERENCE = re.compile(r"issues? #?[0-9]+", re.IGNORECASE)


def _product_files() -> list[Path]:
    return sorted(path for top in PRODUCT for path in (ROOT / top).rglob("*.py"))


def _imports(path: Path) -> list[str]:
    """Every module `path` imports, at module level or inside a function."""
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names.append(node.module or "")
    return names


def test_no_product_module_imports_the_lab():
    importers = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in _product_files()
        for name in _imports(path)
        if name == "lab" or name.startswith("lab.")
    ]
    assert importers == []


def test_the_guard_sees_a_function_local_import(tmp_path):
    module = tmp_path / "module.py"
    module.write_text("def run():\n    from lab.evaluation import report\n    return report\n")
    assert _imports(module) == ["lab.evaluation"]


def test_no_tooling_module_inside_the_production_apps():
    tooling = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "apps").rglob("*")
        if "migrations" not in path.parts and TOOLING_NAME.search(path.name)
    ]
    assert tooling == []


def test_the_lab_commands_are_there_and_production_leaves_them_out():
    from django.core.management import get_commands

    lab_commands = {name for name, app in get_commands().items() if app == "lab"}
    assert lab_commands >= {"evaluate", "evaluate_validity", "bench", "ui_bench", "stale_bench"}

    # Reading the production settings needs their required variables; a DATABASE_URL keeps
    # the settings from starting the embedded database (nothing connects to it).
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    env.update(
        DJANGO_SETTINGS_MODULE="memoryhub.settings.production",
        DJANGO_SECRET_KEY="x" * 60,
        DJANGO_ALLOWED_HOSTS="memory.example.com",
        DATABASE_URL="postgres://nobody@127.0.0.1:1/none",
    )
    result = subprocess.run(
        [sys.executable, "-c", "from django.conf import settings; print(settings.INSTALLED_APPS)"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    installed = ast.literal_eval(result.stdout.strip())
    assert "apps.search" in installed and "lab" not in installed


def test_runtime_code_cites_no_issue_numbers():
    cited = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in [*_product_files(), ROOT / "pyproject.toml"]
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if ISSUE_REFERENCE.search(line)
    ]
    assert cited == []
