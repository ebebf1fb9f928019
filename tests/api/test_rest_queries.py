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
