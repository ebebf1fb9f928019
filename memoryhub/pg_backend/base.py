"""PostgreSQL backend for servers reached through DATABASE_URL / DATABASE_REPLICA_URL.

Plain Django PostgreSQL, plus two things the read/write router (memoryhub/replica/) needs:
a connection error on a server marks it down in this process (after a probe confirms it does
not answer), and a new connection to a server marked down fails at once, so a write while the
primary is down answers 503 with Retry-After instead of waiting out the pool's timeout.
"""

from __future__ import annotations

from django.db.backends.postgresql.base import Database
from django.db.backends.postgresql.base import DatabaseWrapper as PostgresDatabaseWrapper
from django.db.utils import DatabaseErrorWrapper
from django.utils.functional import cached_property
from psycopg_pool import PoolTimeout

from memoryhub.replica import health


class ServerMarkedDown(Database.OperationalError):
    """A connection refused at once because the router already knows the server is down."""


class _WatchedErrors(DatabaseErrorWrapper):
    def __exit__(self, exc_type, exc_value, traceback):
        if exc_type is not None and issubclass(
            exc_type, Database.OperationalError | Database.InterfaceError
        ):
            health.connection_failed(self.wrapper.alias)
        return super().__exit__(exc_type, exc_value, traceback)


class DatabaseWrapper(PostgresDatabaseWrapper):
    @cached_property
    def wrap_database_errors(self):
        return _WatchedErrors(self)

    def get_new_connection(self, conn_params):
        if not health.is_up(self.alias):
            raise ServerMarkedDown(f"database {self.alias!r} is unavailable")
        try:
            return super().get_new_connection(conn_params)
        except PoolTimeout:
            # The pool waited in vain: the server is down, or it came back while the pool was
            # backing off between reconnect attempts (then a fresh pool connects at once).
            if not health.probe(self.alias):
                health.mark_down(self.alias)
                raise
            self.close_pool()
            return super().get_new_connection(conn_params)
