"""`manage.py serve` as `make run` starts it, as a subprocess on this session's test database
(EMBEDDED_DATABASE_NAME), for the tests that need the whole product: its web processes, its
scheduler, its start-up log."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from django.db import connection

ROOT = Path(__file__).resolve().parents[1]


def serve(port: int, **env_extra) -> subprocess.Popen:
    """Two web processes with no broker (the default a newcomer gets); stdout and stderr
    together in the process's stdout."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "memoryhub.settings.base",
        "EMBEDDED_DATABASE_NAME": connection.settings_dict["NAME"],
        "CELERY_BROKER_URL": "",
        "PYTHONUNBUFFERED": "1",
        **env_extra,
    }
    env.pop("DATABASE_URL", None)
    command = [sys.executable, "manage.py", "serve", "--port", str(port), "--workers", "2"]
    return subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def stop(process: subprocess.Popen) -> str:
    """SIGTERM (as Ctrl-C in `make run` would), then everything it printed."""
    process.send_signal(signal.SIGTERM)
    try:
        output, _ = process.communicate(timeout=40)
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate()
    return output
