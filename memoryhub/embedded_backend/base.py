"""PostgreSQL backend that brings the embedded server back when it has died.

Used only for the embedded server (DATABASE_URL unset). A new connection that fails because
the postmaster is gone (a SIGKILL, an OOM kill) restarts it through memoryhub.db, which
serializes the start with a file lock and lets PostgreSQL's WAL recovery replay every committed
transaction, then connects again. So the request after a crash waits a few seconds instead of
every request answering 500 until a person runs a command.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from django.db.backends.postgresql.base import Database
from django.db.backends.postgresql.base import DatabaseWrapper as PostgresDatabaseWrapper

logger = logging.getLogger(__name__)

REVIVE_SECONDS = 25.0


class DatabaseWrapper(PostgresDatabaseWrapper):
    def get_new_connection(self, conn_params):
        var_dir = self.settings_dict.get("EMBEDDED_VAR_DIR")
        if not var_dir:
            return super().get_new_connection(conn_params)
        from memoryhub.db import server_alive

        # Checked before asking the pool too: a pool would otherwise wait its whole timeout
        # for a server that is not coming back by itself.
        if not server_alive(Path(var_dir) / "pgdata"):
            return self._revive_and_connect(Path(var_dir), conn_params)
        try:
            return super().get_new_connection(conn_params)
        except Database.OperationalError:
            if server_alive(Path(var_dir) / "pgdata"):
                raise  # the server is up: the failure is something else
            return self._revive_and_connect(Path(var_dir), conn_params)

    def _revive_and_connect(self, var_dir: Path, conn_params):
        from memoryhub.db import embedded_database

        deadline = time.monotonic() + REVIVE_SECONDS
        while True:
            try:
                logger.warning("embedded PostgreSQL is down; restarting it")
                server = embedded_database(var_dir, self.settings_dict["EMBEDDED_NAME"])
                conn_params.update(host=str(server.socket_dir), port=server.port)
                self.settings_dict.update(HOST=str(server.socket_dir), PORT=str(server.port))
                if self.settings_dict.get("OPTIONS", {}).get("pool"):
                    # The pool's connections died with the server and its reconnect attempts
                    # back off; a fresh pool connects at once (waiters on the old one fail
                    # fast instead of waiting out their timeout).
                    self.close_pool()
                return super().get_new_connection(conn_params)
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(1)
