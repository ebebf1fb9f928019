"""PostgreSQL backend that brings the embedded server back when it has died.

Used only for the embedded server (DATABASE_URL unset). A new connection that finds the
postmaster gone (a SIGKILL, an OOM kill) restarts it through memoryhub.db, which serializes the
start with a file lock and lets PostgreSQL's WAL recovery replay every committed transaction,
then connects again. So the request after a crash waits a few seconds instead of every request
answering 500 until a person runs a command.

With the connection pool, where the time went after a kill (docs/hardening.md has the figures):
a request asking the pool for a connection waited the whole pool timeout (30 s) when the server
looked alive at that moment (a killed postmaster is a zombie until it is reaped) or died while
it waited; several requests then each closed the pool the other had just made. Now a wait on
the pool is cut into short slices with a look at the server between them, a dead server is
restarted at once, and only the pool of the dead server is replaced, once.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

from django.db.backends.postgresql.base import Database
from django.db.backends.postgresql.base import DatabaseWrapper as PostgresDatabaseWrapper

from memoryhub.db import embedded_database, server_alive

logger = logging.getLogger(__name__)

REVIVE_SECONDS = 25.0
# The longest a request waits on the pool before it looks at the server again.
POOL_WAIT_SLICE = 2.0
_pool_swap = threading.Lock()


class DatabaseWrapper(PostgresDatabaseWrapper):
    def get_new_connection(self, conn_params):
        var_dir = self.settings_dict.get("EMBEDDED_VAR_DIR")
        if not var_dir:
            return super().get_new_connection(conn_params)
        pgdata = Path(var_dir) / "pgdata"
        deadline = time.monotonic() + max(self._pool_budget(), REVIVE_SECONDS)
        while True:
            if not server_alive(pgdata):
                self._revive(Path(var_dir), conn_params)
            self._pool_budget()  # a pool made just now waits in slices too
            try:
                return super().get_new_connection(conn_params)
            except Database.OperationalError:
                # PoolTimeout and PoolClosed are OperationalErrors too.
                if time.monotonic() > deadline:
                    raise
                if server_alive(pgdata) and self.pool is None:
                    raise  # the server is up: the failure is something else
                time.sleep(0.1)

    def _pool_budget(self) -> float:
        """The pool's own timeout (DATABASE_POOL_TIMEOUT), which bounds a request's whole wait;
        the pool itself is set to wait one slice of it per call. 0 without a pool."""
        pool = self.pool
        if pool is None:
            return 0.0
        budget = getattr(pool, "memoryhub_budget", None)
        if budget is None:
            pool.memoryhub_budget = budget = pool.timeout
            pool.timeout = min(pool.timeout, POOL_WAIT_SLICE)
        return budget

    def _revive(self, var_dir: Path, conn_params) -> None:
        """Restart the server (one process does; the others wait on its file lock) and give
        this process a fresh pool when the old one served the dead server."""
        stale = self._connection_pools.get(self.alias)
        deadline = time.monotonic() + REVIVE_SECONDS
        while True:
            try:
                logger.warning("embedded PostgreSQL is down; restarting it")
                server = embedded_database(var_dir, self.settings_dict["EMBEDDED_NAME"])
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        conn_params.update(host=str(server.socket_dir), port=server.port)
        self.settings_dict.update(HOST=str(server.socket_dir), PORT=str(server.port))
        if stale is None:
            return
        with _pool_swap:
            if self._connection_pools.get(self.alias) is stale:
                # Its connections died with the server and its reconnect attempts back off; a
                # fresh pool connects at once, and clients waiting on the old one get
                # PoolClosed, which get_new_connection answers by asking the new one.
                del self._connection_pools[self.alias]
                stale.close(timeout=0)
