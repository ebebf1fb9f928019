"""Where a read goes now (the replica, or the primary after a write, a pin or a fault) and the
router that DATABASE_ROUTERS installs; raw SQL reads use `read_connection`, which follows the
same choice as the router's `db_for_read`."""

from __future__ import annotations

from django.conf import settings
from django.db import connections

from .health import is_up
from .pinning import UNPINNED_MODELS, is_pinned, pin
from .state import PRIMARY, REPLICA, current

ROUTER = "memoryhub.replica.routing.PrimaryReplicaRouter"


def replica_configured() -> bool:
    return ROUTER in settings.DATABASE_ROUTERS and REPLICA in connections.settings


def read_alias() -> str:
    """Where a read issued now goes."""
    if not replica_configured():
        return PRIMARY
    state = current()
    if state is None or state.wrote or connections[PRIMARY].in_atomic_block:
        return PRIMARY  # jobs and commands, and a request after its first write
    if PRIMARY in state.avoid:
        return REPLICA  # this request's read failed on the primary: it runs again here
    preferred = PRIMARY if REPLICA in state.avoid or is_pinned(state) else REPLICA
    if is_up(preferred):
        return preferred
    other = REPLICA if preferred == PRIMARY else PRIMARY
    if other in state.avoid:
        return preferred
    return other if is_up(other) else preferred


class PrimaryReplicaRouter:
    def db_for_read(self, model, **hints):
        return read_alias()

    def db_for_write(self, model, **hints):
        state = current()
        if state is not None and not state.wrote and model._meta.label_lower not in UNPINNED_MODELS:
            pin(state)
        return PRIMARY

    def allow_relation(self, obj1, obj2, **hints):
        return True  # one database, two servers

    def allow_migrate(self, db, app_label, model_name=None, **hints):
        return db == PRIMARY


class _ReadConnection:
    """`django.db.connection` for the server reads go to now (raw SQL reads)."""

    def __getattr__(self, name):
        return getattr(connections[read_alias()], name)


read_connection = _ReadConnection()
