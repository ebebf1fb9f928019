"""A second process counting against the same rate limits, as a second web process would."""

from __future__ import annotations

import os
import subprocess
import sys

from django.db import connection


def spend_in_another_process(token_pk: int, requests: int, **env: str) -> None:
    """Count `requests` of a token's rate limit from another process (its own interpreter,
    database connection and cache client); each must be allowed."""
    other = subprocess.run(
        [
            sys.executable,
            "-c",
            "import django; django.setup(); from apps.access import ratelimit; "
            f"print([ratelimit.token_request({token_pk}).allowed for _ in range({requests})])",
        ],
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "memoryhub.settings.base",
            "EMBEDDED_DATABASE_NAME": connection.settings_dict["NAME"],
            **env,
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert other.returncode == 0, other.stderr[-2000:]
    assert other.stdout.strip().endswith(str([True] * requests))
