"""The read/write router with two aliases on the real embedded server: `replica` is a second
connection to the same test database (a stand-in for a hot standby that is always caught up),
or a server that does not answer. Requests are simulated with the same per-request state the
ASGI middleware sets; the REST calls go through Django's full middleware stack."""

from __future__ import annotations

import contextlib

import pytest
from django.db import connections, router
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from apps.access.services import token_create
from apps.memories.models import Memory
from memoryhub.replica import health, request_scope, routing
from memoryhub.replica.state import REPLICA, RequestRouting, current, request_routing
from tests import factories

# Two connections that must see each other's committed rows.
pytestmark = pytest.mark.django_db(transaction=True, databases=["default", "replica"])


@contextlib.contextmanager
def request(client: str):
    token = request_routing.set(RequestRouting(client=client))
    try:
        yield request_routing.get()
    finally:
        request_routing.reset(token)


@pytest.fixture
def replica(settings):
    """`replica(alive=True)` installs the router; the replica alias (a second connection to the
    test database, memoryhub/settings/test.py) answers, or points at a port nobody serves."""
    conn = connections[REPLICA]
    saved = dict(conn.settings_dict)

    def add(alive: bool = True):
        if not alive:
            conn.close()
            conn.settings_dict.update(HOST="127.0.0.1", PORT="8497")  # nothing listens there
        settings.DATABASE_ROUTERS = [routing.ROUTER]

    yield add
    conn.close()
    conn.settings_dict.clear()
    conn.settings_dict.update(saved)
    health.marked_down.clear()
    from django.core.cache import caches

    caches["routing"].clear()


def test_reads_of_a_request_go_to_the_replica_writes_and_jobs_to_the_primary(replica):
    replica()
    ns = factories.namespace("router-ns")
    factories.memories(ns, ["first note"])
    with CaptureQueriesContext(connections[REPLICA]) as on_replica:
        with request("reader"):
            assert Memory.objects.filter(namespace=ns).count() == 1
        assert Memory.objects.filter(namespace=ns).count() == 1  # a job or command
    assert len(on_replica.captured_queries) == 1
    assert router.db_for_write(Memory) == "default"
    assert not router.allow_migrate(REPLICA, "memories")
    assert router.allow_migrate("default", "memories")


def test_a_client_that_wrote_reads_the_primary_for_a_while(replica, settings):
    replica()
    ns = factories.namespace("ryw-ns")
    with request("writer") as state:
        factories.memories(ns, ["written just now"])
        assert state.wrote and routing.read_alias() == "default"  # same request
    with request("writer"):
        assert routing.read_alias() == "default"  # its next request, any process
    with request("someone-else"):
        assert routing.read_alias() == REPLICA


def test_search_answers_when_the_replica_is_down(replica, embedding_model):
    replica(alive=False)
    ns = factories.namespace("down-ns")
    factories.memories(ns, ["The deploy needs the migration run first."])
    token, raw = token_create(name="t", namespaces=[ns], read_only=True)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    with request("reader"):
        assert routing.read_alias() == REPLICA  # not known to be down yet
        r = client.post(
            "/api/v1/search/", {"namespace": "down-ns", "query": "deploy migration"}, "json"
        )
    assert r.status_code == 200, r.content
    assert [m["content"] for m in r.json()["memories"]][:1] == [
        "The deploy needs the migration run first."
    ]
    with request("reader"):
        assert routing.read_alias() == "default"  # marked down: no more tries for now


def test_without_a_replica_nothing_is_routed():
    assert not routing.replica_configured()
    with request("anyone"):
        assert routing.read_alias() == "default"


def test_a_login_pins_the_new_session_cookie_too(replica, settings):
    """Django gives a new session cookie at login; the pin must follow it, or the next page
    could read the session from a replica that has not replayed it yet."""
    import asyncio

    replica()

    async def login_app(scope, receive, send):
        current().wrote = True  # as the session and last_login writes do
        await send(
            {
                "type": "http.response.start",
                "status": 302,
                "headers": [(b"set-cookie", b"sessionid=fresh123; HttpOnly; Path=/")],
            }
        )
        await send({"type": "http.response.body", "body": b""})

    async def ignore(message):
        pass

    scope = {"type": "http", "headers": [(b"cookie", b"sessionid=old456")]}
    asyncio.run(request_scope.RoutingScope(login_app)(scope, None, ignore))
    with request(request_scope.client_key([(b"cookie", b"sessionid=fresh123")])):
        assert routing.read_alias() == "default"
    with request(request_scope.client_key([(b"cookie", b"sessionid=other")])):
        assert routing.read_alias() == REPLICA


def test_a_readers_search_reads_nothing_from_the_primary(replica, embedding_model):
    """Every read of a search (plain-SQL stages included) follows the router, so searches keep
    answering from the replica while the primary is down; only its log row is written there."""
    replica()
    ns = factories.namespace("reads-ns")
    factories.memories(ns, ["Deploys need the migration run first.", "Lunch is at noon."])
    token, raw = token_create(name="t", namespaces=[ns], read_only=True)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    with CaptureQueriesContext(connections["default"]) as on_primary, request("reader"):
        r = client.post(
            "/api/v1/search/", {"namespace": "reads-ns", "query": "deploy migration"}, "json"
        )
    assert r.status_code == 200, r.content
    assert r.json()["memories"][0]["content"] == "Deploys need the migration run first."
    reads = [
        q["sql"] for q in on_primary.captured_queries if q["sql"].lstrip().startswith("SELECT")
    ]
    assert reads == []


def test_a_search_that_misses_does_not_pin_its_reader_to_the_primary(replica, embedding_model):
    """A search that finds nothing good stores its query for the missed-searches queue. That
    is bookkeeping, like the search log: the reader's next searches still go to the replica
    (pinned, they went to the primary and failed there when it stopped)."""
    replica()
    ns = factories.namespace("missed-ns")
    factories.memories(ns, ["Lunch is at noon.", "The office plants need water on Mondays."])
    token, raw = token_create(name="t", namespaces=[ns], read_only=True)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    from apps.search.models import MissedQueryVector

    with request("reader") as state:
        r = client.post(
            "/api/v1/search/",
            {"namespace": "missed-ns", "query": "kubernetes ingress certificate rotation"},
            "json",
        )
        assert r.status_code == 200, r.content
        assert r.json()["flags"]["evidence_gap"] or not r.json()["memories"]
        assert not state.wrote
    assert MissedQueryVector.objects.filter(namespace=ns).exists()
    with request("reader"):
        assert routing.read_alias() == REPLICA


def test_an_outage_logs_a_traceback_only_where_it_says_something(replica, caplog):
    """A statement that meets the outage logs its traceback; the requests refused at once
    because the server is already known down log one line each (no traceback flood)."""
    import logging

    from django.db import OperationalError

    from apps.api.errors import api_exception_handler

    replica(alive=False)
    conn = connections[REPLICA]
    with pytest.raises(OperationalError) as met:  # the first failure: a real refused connect
        conn.ensure_connection()
    assert health.marked_down  # the probe marked it down
    conn.close()
    with pytest.raises(OperationalError) as refused:  # refused at once now
        conn.ensure_connection()
    with caplog.at_level(logging.WARNING, logger="apps.api.errors"):
        for exc in (met.value, refused.value):
            response = api_exception_handler(exc, {})
            assert response.status_code == 503 and response["Retry-After"] == "5"
    first, second = [r for r in caplog.records if r.name == "apps.api.errors"]
    assert first.exc_info is not None
    assert second.exc_info is None and "is unavailable" in second.getMessage()
