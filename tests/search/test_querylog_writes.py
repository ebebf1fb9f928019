"""A search's own writes (its log row, a missed query's vector) never hold up its answer: by
default (SEARCH_QUERYLOG_SYNC=False) the search reserves the row's id and a background thread
inserts the row; with the primary unavailable behind a replica the log is dropped with a
warning and the search still answers. Committed data (a transactional test): the writer thread
has a connection of its own."""

from __future__ import annotations

import logging
import time

import pytest
from django.db import OperationalError, connections
from django.test.utils import CaptureQueriesContext

from apps.search import querylog
from apps.search.models import QueryLog
from apps.search.services import search
from memoryhub.replica import routing
from tests import factories

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def notes(embedding_model):
    ns = factories.namespace("log-ns")
    factories.memories(ns, ["Deploys need the migration run first.", "Lunch is at noon."])
    return ns


def test_a_search_answers_before_its_log_row_is_written(notes, settings):
    settings.SEARCH_QUERYLOG_SYNC = False
    with CaptureQueriesContext(connections["default"]) as queries:
        response = search(namespace="log-ns", query="deploy migration")
    assert response.memories[0]["content"] == "Deploys need the migration run first."
    statements = [q["sql"].lstrip().split(None, 1)[0].upper() for q in queries.captured_queries]
    # No INSERT, so no commit to wait for: the log's id is a `nextval`.
    assert not {"INSERT", "UPDATE", "DELETE"} & set(statements)
    querylog.flush()
    logged = QueryLog.objects.get(pk=response.query_log_id)
    assert (logged.namespace_id, logged.query) == (notes.pk, "deploy migration")


@pytest.mark.parametrize("sync", [False, True])
def test_with_the_primary_down_a_search_answers_and_its_log_is_dropped(
    notes, settings, monkeypatch, caplog, sync
):
    settings.SEARCH_QUERYLOG_SYNC = sync
    settings.DATABASE_ROUTERS = [routing.ROUTER]  # a replica serves reads

    def primary_down(*args, **kwargs):
        # What a caller meets when memoryhub.pg_backend refuses a primary marked down.
        raise OperationalError("database 'default' is unavailable")

    monkeypatch.setattr(querylog, "reserve_id", primary_down)
    monkeypatch.setattr(querylog, "_write", primary_down)
    with caplog.at_level(logging.WARNING, logger="apps.search.services"):
        response = search(namespace="log-ns", query="deploy migration")
    assert response.memories[0]["content"] == "Deploys need the migration run first."
    assert response.query_log_id is None
    assert "search log not written" in caplog.text
    querylog.flush()
    assert not QueryLog.objects.exists()


def test_log_ids_are_reserved_a_block_at_a_time(notes, settings):
    """Each search's id is its own, and the primary is asked once per block of ids, not once
    per search."""
    settings.SEARCH_QUERYLOG_SYNC = False
    with CaptureQueriesContext(connections["default"]) as queries:
        ids = [search(namespace="log-ns", query="lunch").query_log_id for _ in range(3)]
        ids += [querylog.reserve_id() for _ in range(querylog.ID_BLOCK)]
    assert len(set(ids)) == len(ids)
    reservations = [q for q in queries.captured_queries if "nextval" in q["sql"]]
    assert 1 <= len(reservations) <= 2
    querylog.flush()
    assert QueryLog.objects.filter(pk__in=ids[:3]).count() == 3


def test_the_writer_keeps_its_connection_through_a_burst_and_gives_it_back_when_idle(
    notes, settings, monkeypatch
):
    """Rows that come one after another are written on the connection the first one took
    from the pool; once none has come for a while, the connection goes back."""
    settings.SEARCH_QUERYLOG_SYNC = False
    settings.SEARCH_QUERYLOG_IDLE_RELEASE_S = 1.0
    querylog.flush()
    checkouts = []
    write = querylog._write

    def counted(fields):
        # The writer thread's own connection: None when this row has to take one first.
        checkouts.append(connections["default"].connection is None)
        return write(fields)

    monkeypatch.setattr(querylog, "_write", counted)
    querylog._ensure_thread()
    querylog._queue.put(None)  # the running writer stops; the next row starts a fresh one
    querylog.flush()
    # flush() returns once the writer has taken the None; until the thread has ended, the
    # next row would be queued for it and never written.
    querylog._thread.join(timeout=10)
    burst = [search(namespace="log-ns", query=f"lunch {i}").query_log_id for i in range(5)]
    querylog.flush()
    assert checkouts == [True, False, False, False, False]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # idle: the writer gives its connection back
        time.sleep(1.2)
        later = search(namespace="log-ns", query="deploy").query_log_id
        querylog.flush()
        if checkouts[-1]:
            break
    assert checkouts[-1] is True
    assert QueryLog.objects.filter(pk__in=[*burst, later]).count() == 6
