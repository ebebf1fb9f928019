"""Keyset pages (apps/memories/browse.py): every memory exactly once, in order, forwards and
back, for every sort, ties included; a chunked document is listed once."""

from __future__ import annotations

import pytest

from apps.memories import services
from apps.memories.browse import SORTS, listed, memory_page
from apps.memories.models import Memory

pytestmark = pytest.mark.django_db


@pytest.fixture
def rows(namespace, embedding_model):
    items = [
        {"content": f"Note {i}", "importance": [0.2, 0.5, 0.5, 0.9][i % 4],
         "created_at": f"2024-01-0{1 + i % 3}T00:00:00Z"}
        for i in range(11)
    ]  # fmt: skip
    services.memory_batch_create(namespace=namespace, items=items, check_near_duplicates=False)
    services.memory_create(namespace=namespace, content="# Doc\n\n" + "word " * 900)
    return listed(Memory.objects.filter(namespace=namespace))


@pytest.mark.parametrize("sort", list(SORTS))
def test_pages_cover_everything_once_in_order(rows, sort):
    field, desc = SORTS[sort]
    expected = list(rows.order_by(f"-{field}" if desc else field, "-id" if desc else "id"))
    seen, pages, cursor = [], [], None
    while True:
        page = memory_page(rows, sort=sort, cursor=cursor, size=4)
        pages.append(page)
        seen += page.items
        if not page.next_cursor:
            break
        cursor = page.next_cursor
    assert [m.pk for m in seen] == [m.pk for m in expected]
    assert pages[0].prev_cursor is None
    back = memory_page(rows, sort=sort, cursor=pages[-1].prev_cursor, size=4)
    assert [m.pk for m in back.items] == [m.pk for m in pages[-2].items]


def test_a_chunked_document_is_listed_once(rows, namespace):
    assert Memory.objects.filter(namespace=namespace, metadata__has_key="chunk_index").count() > 1
    assert rows.filter(metadata__has_key="chunk_index").count() == 1
