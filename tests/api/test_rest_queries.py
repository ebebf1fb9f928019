"""The list endpoints stay at a fixed number of queries however many rows a page holds."""

from __future__ import annotations

import pytest
from rest_framework.test import APIRequestFactory

from apps.access.services import token_create
from apps.api.views.edges import EdgeListCreateApi
from apps.api.views.memories import MemoryListCreateApi
from apps.memories.models import Namespace
from apps.memories.services import edge_create, memory_batch_create


@pytest.fixture
def page_of(db, embedding_model):
    namespace = Namespace.objects.create(name="many")
    _, raw = token_create(name="t", namespaces=[namespace])

    def fill(n: int):
        items = [
            {"content": f"Memory {i} about topic {i}", "tags": [f"t{i}", "x"]} for i in range(n)
        ]
        results = memory_batch_create(namespace=namespace, items=items)
        for a, b in zip(results, results[1:], strict=False):
            edge_create(source=a.memory, target=b.memory, relation="relates_to")

    def get(view, path):
        request = APIRequestFactory().get(path, HTTP_AUTHORIZATION=f"Bearer {raw}")
        response = view.as_view()(request)
        assert response.status_code == 200
        return response

    return fill, get


@pytest.mark.parametrize("view", [MemoryListCreateApi, EdgeListCreateApi])
def test_list_query_count_does_not_grow_with_the_page(page_of, view, django_assert_max_num_queries):
    fill, get = page_of
    fill(3)
    with django_assert_max_num_queries(8) as small:
        get(view, "/api/v1/x/?limit=100")
    fill(30)
    with django_assert_max_num_queries(len(small.captured_queries)):
        response = get(view, "/api/v1/x/?limit=100")
    assert len(response.data["results"]) >= 29  # 30 memories (3 repeat), 29 links


# Query-count baselines per list endpoint, on a warm token (authentication: the token and its
# namespaces; last use is recorded at most once a minute; the token's rate counter, one upsert
# shared by every web process). A change that adds a query to a list shows up here first.
BASELINES = {
    "/api/v1/memories/?limit=100": 7,  # auth 2, rate 1, count, page, tags, re-check marks
    "/api/v1/memories/?limit=100&namespace=many&tags=x": 8,  # + the namespace
    "/api/v1/edges/?limit=100": 5,  # auth 2, rate 1, count, page
    "/api/v1/tags/?limit=100": 6,  # auth 2, rate 1, namespaces, count, page
    "/api/v1/namespaces/": 6,  # auth 2, rate 1, visible, writable, counts
    "/api/v1/stats/": 7,  # auth 2, rate 1, namespaces, memories, edges, searches
}


@pytest.mark.parametrize(("path", "queries"), BASELINES.items())
def test_list_endpoint_query_baseline(page_of, path, queries, django_assert_num_queries):
    from django.urls import resolve

    fill, get = page_of
    fill(5)
    view = resolve(path.split("?")[0]).func.view_class
    get(view, path)  # first call records the token's last use
    with django_assert_num_queries(queries):
        get(view, path)
