"""Query-count guards: each page costs a fixed number of queries, whatever the data size
(no N+1: a page of 50 memories with tags and chunks costs what a page of 5 costs)."""

from __future__ import annotations

import pytest
from django.test import Client

from apps.memories import services
from apps.memories.models import Memory

from .conftest import PASSWORD, make_user, seed_namespace

pytestmark = pytest.mark.django_db


@pytest.fixture
def seeded(db, embedding_model, settings):
    settings.SEARCH_QUERYLOG_SYNC = True
    namespace = seed_namespace("acme")
    services.memory_batch_create(
        namespace=namespace,
        items=[
            {"content": f"Filler note {i} about deploys and caches.", "tags": [f"t{i % 7}", "x"]}
            for i in range(60)
        ],
        check_near_duplicates=False,
    )
    redis = Memory.objects.get(namespace=namespace, title=REDIS)
    for days in (15, 16, 17):  # some history, and a few memories in the trash
        services.memory_update(memory=redis, content=f"Sessions in Redis, {days}-day TTL.")
    for memory in Memory.objects.filter(namespace=namespace, content__startswith="Filler")[:5]:
        services.memory_delete(memory=memory)
    make_user("root", superuser=True)
    client = Client()
    client.login(username="root", password=PASSWORD)
    return namespace, client


def _memory(namespace, title):
    return Memory.objects.get(namespace=namespace, title=title)


HANDBOOK = "Operations handbook — Operations handbook"
REDIS = "Use Redis for the session cache"

# (name, url builder, maximum queries)
PAGES = [
    ("search", lambda ns: "/?namespace=acme&q=sessions+redis", 34),
    ("explain", lambda ns: "/explain/?namespace=acme&q=sessions+redis", 32),
    ("browse", lambda ns: "/ns/acme/memories/", 12),
    ("browse sorted", lambda ns: "/ns/acme/memories/?sort=importance&tag=x", 12),
    # + 1 each: the validity timeline, and the titles of the memories its history's links name;
    # + 1 each: its re-check marks (issue 44)
    ("memory", lambda ns: f"/memories/{_memory(ns, 'Use Redis for the session cache').pk}/", 17),
    ("document chunk", lambda ns: f"/memories/{_memory(ns, HANDBOOK).pk}/", 17),
    ("edit", lambda ns: f"/memories/{_memory(ns, 'Use Redis for the session cache').pk}/edit/", 10),
    ("create", lambda ns: "/ns/acme/memories/new/", 8),
    ("connect", lambda ns: "/ns/acme/connect/", 10),
    ("members", lambda ns: "/ns/acme/members/", 10),
    ("history", lambda ns: f"/memories/{_memory(ns, REDIS).pk}/history/", 10),
    ("trash", lambda ns: "/ns/acme/trash/", 10),
    ("graph", lambda ns: "/ns/acme/graph/", 8),
    ("graph data", lambda ns: "/ns/acme/graph/data/?unlinked=on", 10),
    ("graph around a memory",
     lambda ns: f"/ns/acme/graph/data/?memory={_memory(ns, REDIS).pk}&depth=2", 12),
    ("analytics", lambda ns: "/ns/acme/analytics/?days=90", 15),  # + roll-up check
    ("re-check queue", lambda ns: "/ns/acme/queues/recheck/", 10),  # marks prefetched
]  # fmt: skip


@pytest.mark.parametrize("name,url,limit", PAGES, ids=[p[0] for p in PAGES])
def test_page_query_count(seeded, django_assert_max_num_queries, name, url, limit):
    namespace, client = seeded
    target = url(namespace)
    client.get(target)  # warm caches that are per process, not per request
    with django_assert_max_num_queries(limit):
        response = client.get(target)
    assert response.status_code == 200
