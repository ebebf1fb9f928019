"""A SIGKILL of the embedded PostgreSQL during a write load: the app restarts it by itself,
serves again within 30 s, and every write it acknowledged is still there.

Runs a real server (uvicorn in a subprocess) with the connection pool, as `make run` does, on
its own embedded PostgreSQL in a fresh var dir, so killing that postmaster disturbs nothing
else. loadtest/db_kill.py is the same drill as a command that prints the timeline.
"""

from __future__ import annotations

from loadtest.db_kill import Server, drill


def test_sigkill_of_postgres_heals_without_a_person_and_loses_nothing():
    with Server(pool=8, workers=1, port=None) as server:
        figures = drill(server, writers=3, before=3, after=2)
    assert figures["new_postmaster"]
    assert figures["recovered_s"] is not None and figures["recovered_s"] < 30, figures
    assert figures["acknowledged"] and figures["missing"] == 0, figures
    assert set(figures["failed_after_kill"]) <= {503}, figures  # never a 500, never hung
    assert figures["healthz_after"] == 200
