"""The production settings pass `manage.py check --deploy` with .env.example's values filled in."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _example_values() -> dict[str, str]:
    """Every `# DJANGO_...=value` line of .env.example, with the secret key filled in."""
    values = {}
    for line in (ROOT / ".env.example").read_text().splitlines():
        match = re.fullmatch(r"#\s*(DJANGO_[A-Z_]+)=(.*)", line.strip())
        if match:
            values[match.group(1)] = match.group(2).strip()
    values["DJANGO_SECRET_KEY"] = secrets.token_urlsafe(60)
    return values


def test_check_deploy_is_clean_with_the_example_values():
    values = _example_values()
    assert values["DJANGO_SETTINGS_MODULE"] == "memoryhub.settings.production"
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env={**env, **values},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_a_public_url_that_is_not_an_address_is_refused_at_start_naming_it():
    env = {**os.environ, "MEMORYHUB_PUBLIC_URL": "example.org/memory"}
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode != 0
    assert "MEMORYHUB_PUBLIC_URL='example.org/memory'" in result.stderr
    assert "https://example.org/memory/" in result.stderr


def test_every_secure_setting_the_production_module_reads_is_in_the_example():
    source = (ROOT / "memoryhub/settings/production.py").read_text()
    read = set(re.findall(r'env(?:\.\w+)?\("(DJANGO_[A-Z_]+)"', source))
    assert read <= set(_example_values())
