"""The embedded server: many processes start it at once safely; a hard kill loses nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from memoryhub.db import embedded_database, shared_buffers_mb, stop_embedded

ROOT = Path(__file__).resolve().parents[2]

START_SNIPPET = """
import json, sys
from pathlib import Path
from memoryhub.db import embedded_database
server = embedded_database(Path(sys.argv[1]), name="crashtest")
print(json.dumps({"socket": str(server.socket_dir), "port": server.port}))
"""


@pytest.fixture
def var_dir(tmp_path_factory):
    # Short path: a unix socket path must stay under ~100 characters.
    path = Path(f"/tmp/mh-{os.getpid()}-{time.monotonic_ns() % 10**6}")
    path.mkdir()
    yield path
    stop_embedded(path / "pgdata")
    subprocess.run(["rm", "-rf", str(path)], check=False)


def _connect(server):
    return psycopg.connect(
        dbname="crashtest",
        user="postgres",
        host=str(server.socket_dir),
        port=server.port,
        autocommit=True,
    )


def test_concurrent_starts_share_one_server(var_dir):
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", START_SNIPPET, str(var_dir)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in outputs]
    servers = {out.strip().splitlines()[-1] for out, _ in outputs}
    assert len(servers) == 1  # every process found the same server
    assert (var_dir / "pgdata" / "PG_VERSION").exists()


def test_a_new_database_name_is_created_on_a_running_server(var_dir):
    embedded_database(var_dir, name="crashtest")
    second = embedded_database(var_dir, name="another_db")
    with psycopg.connect(
        dbname="another_db", user="postgres", host=str(second.socket_dir), port=second.port
    ) as conn:
        assert conn.execute("SELECT current_database()").fetchone()[0] == "another_db"


def test_committed_rows_survive_a_killed_server(var_dir):
    server = embedded_database(var_dir, name="crashtest")
    with _connect(server) as conn:
        conn.execute("CREATE TABLE kept (n int)")
        conn.execute("INSERT INTO kept SELECT generate_series(1, 1000)")
    pid = int((var_dir / "pgdata" / "postmaster.pid").read_text().split()[0])
    os.kill(pid, signal.SIGKILL)
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            os.kill(pid, 0)
            time.sleep(0.2)
        except ProcessLookupError:
            break
    time.sleep(1)  # let the orphaned backends notice the postmaster is gone

    restarted = embedded_database(var_dir, name="crashtest")  # crash recovery, no clean-up
    with _connect(restarted) as conn:
        assert conn.execute("SELECT count(*) FROM kept").fetchone()[0] == 1000


def _shared_buffers_mb(server) -> int:
    with _connect(server) as conn:
        row = conn.execute(
            "SELECT setting::bigint * 8 / 1024 FROM pg_settings WHERE name = 'shared_buffers'"
        ).fetchone()
    return row[0]


def test_the_server_settings_follow_the_release_and_the_machine(var_dir):
    """shared_buffers is an eighth of the memory (256 MB to 2 GB); an install whose settings
    block an earlier release wrote gets the current one at its next start, once."""
    assert shared_buffers_mb(4 * 2**30) == 512
    assert shared_buffers_mb(1 * 2**30) == 256 and shared_buffers_mb(64 * 2**30) == 2048
    server = embedded_database(var_dir, name="crashtest")
    assert _shared_buffers_mb(server) == shared_buffers_mb()
    stop_embedded(var_dir / "pgdata")
    conf = var_dir / "pgdata" / "postgresql.conf"
    old = conf.read_text().replace(
        f"shared_buffers = {shared_buffers_mb()}MB", "shared_buffers = 128MB"
    )
    conf.write_text(old)
    restarted = embedded_database(var_dir, name="crashtest")
    assert _shared_buffers_mb(restarted) == shared_buffers_mb()
    assert conf.read_text().count("# memoryhub settings") == 1
