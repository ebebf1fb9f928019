"""Rows already odd in the database (inserted by SQL) never make a page fail: the browse list,
every memory page and its tabs, the search page, the stale queue, and the admin's memory list
and change pages, in the real browser against the live server."""

from __future__ import annotations

import pytest

from apps.memories import services
from tests.hostile.poison import POISON, insert_poison_rows

from .conftest import login


@pytest.fixture
def poisoned(transactional_db, embedding_model):
    namespace = services.namespace_get_or_create(name="odd")
    services.memory_create(namespace=namespace, content="An ordinary poison row neighbour")
    return insert_poison_rows(namespace)


def _loads(page, path: str) -> str:
    response = page.goto(path)
    assert response.status == 200, f"{path}: {response.status}"
    return page.content()


def test_pages_show_poison_rows(page, admin_user, poisoned):
    login(page, "admin")
    html = _loads(page, "/ns/odd/memories/?per_page=100")
    assert sum(name in html for name in POISON) >= 15  # the first page lists them
    for sort in ("oldest", "newest", "importance"):
        _loads(page, f"/ns/odd/memories/?sort={sort}")
    html = _loads(page, "/?namespace=odd&q=poison+row")
    assert "poison row" in html
    _loads(page, "/ns/odd/queues/stale/")
    for name, memory_id in poisoned.items():
        html = _loads(page, f"/memories/{memory_id}/")
        assert name in html
    for name in ("created_infinity", "created_bc", "metadata_too_deep", "metadata_odd_chunk",
                 "metadata_number", "embedding_zero", "accessed_year_20000"):  # fmt: skip
        for tab in ("history/", "similar/", "chunks/", "edit/"):
            _loads(page, f"/memories/{poisoned[name]}/{tab}")
    infinity = _loads(page, f"/memories/{poisoned['created_infinity']}/")
    assert "2200" in infinity  # shown as the nearest supported instant


def test_admin_lists_and_opens_poison_rows(page, admin_user, poisoned):
    login(page, "admin")
    html = _loads(page, "/admin/memories/memory/")
    assert "created_infinity" in html
    for query in ("?o=1", "?o=-2", "?q=poison", "?created_at__year=2200"):
        _loads(page, f"/admin/memories/memory/{query}")
    for name in ("created_infinity", "created_bc", "metadata_too_deep", "metadata_list"):
        html = _loads(page, f"/admin/memories/memory/{poisoned[name]}/change/")
        assert name in html
