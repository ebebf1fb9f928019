"""schemathesis against /api/v1/schema/ of the live server, with a valid token: no 5xx and no
response that breaks the schema (status codes, content types and bodies as documented)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import httpx

from .live import bearer

CHECKS = ",".join(
    [
        "not_a_server_error",
        "response_schema_conformance",
        "status_code_conformance",
        "content_type_conformance",
    ]
)


def test_schemathesis_finds_no_server_error_and_no_schema_violation(
    asgi_server, tokens, settings, tmp_path
):
    settings.SEARCH_QUERYLOG_SYNC = True
    # Hundreds of generated requests in a minute: this run checks the schema, not the per-token
    # limit (tests/hostile and the REST auth tests cover 429).
    settings.API_RATE_LIMIT = "100000/minute"
    warm = httpx.post(
        f"{asgi_server}/api/v1/search/", json={"query": "warm up"}, headers=bearer(tokens.alpha_rw)
    )
    assert warm.status_code == 200
    cli = Path(sys.executable).with_name("schemathesis")
    command = [
        str(cli),
        "run",
        f"{asgi_server}/api/v1/schema/",
        "--header",
        f"Authorization: Bearer {tokens.alpha_rw}",
        "--checks",
        CHECKS,
        "--max-examples",
        os.environ.get("SCHEMATHESIS_MAX_EXAMPLES", "15"),
        "--seed",
        os.environ.get("SCHEMATHESIS_SEED", "20261122"),
        "--workers",
        "1",
        "--request-timeout",
        "60",
        "--generation-database",
        "none",
        "--no-color",
        "--report-dir",
        str(tmp_path),
    ]
    run = subprocess.run(command, capture_output=True, text=True, timeout=400, cwd=tmp_path)
    output = run.stdout + run.stderr
    generated = re.search(r"(\d+) generated", output)
    print(f"schemathesis: {generated.group(0) if generated else 'no count'}")
    summary = output[output.find("SUMMARY") :]
    assert run.returncode == 0, output[-6000:]
    assert generated and int(generated.group(1)) > 100, summary
