"""A worker of a multi-worker server says ready only when its live siblings are warm too."""

from __future__ import annotations

import subprocess
import sys

from apps.core.readiness import siblings_ready


def test_a_warming_sibling_keeps_the_worker_starting_until_it_is_ready(tmp_path):
    sibling = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (tmp_path / "1").write_text("ready")  # this worker (pid 1 stands in for it)
        (tmp_path / str(sibling.pid)).write_text("starting")
        assert not siblings_ready(tmp_path, 1)
        (tmp_path / str(sibling.pid)).write_text("ready")
        assert siblings_ready(tmp_path, 1)
        (tmp_path / str(sibling.pid)).write_text("starting")
    finally:
        sibling.kill()
        sibling.wait()
    # A sibling that died while starting (the supervisor will replace it) does not block.
    assert siblings_ready(tmp_path, 1)
