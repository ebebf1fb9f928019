"""Test settings: only overrides. Same real embedded Postgres, a test database on it."""

from .base import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
CELERY_TASK_ALWAYS_EAGER = True
# Tests run jobs when they mean to; a server they start must not run them on a schedule.
JOBS_SCHEDULER = "off"
# A test's transaction never commits, so a log row queued for after the commit would never be
# written: tests log inline (tests/search/test_querylog_writes.py covers the background path).
SEARCH_QUERYLOG_SYNC = True
# When a test does log in the background, the writer holds no connection between rows, so
# none is left open on the test database when it is dropped.
SEARCH_QUERYLOG_IDLE_RELEASE_S = 0.0

# A second connection to the test database under the replica alias, for the router's tests
# (tests/core/test_replica_routing.py); nothing is routed to it unless a test installs the router.
DATABASES["replica"] = {  # noqa: F405
    **DATABASES["default"],  # noqa: F405
    "ENGINE": "memoryhub.pg_backend",
    "OPTIONS": {},
    "CONN_MAX_AGE": 0,
    "TEST": {"MIRROR": "default"},
}
