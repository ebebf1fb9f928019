"""In a real browser: a memory created in the web form with a source URL shows who wrote it on
its page; a memory written over REST with a token shows that token; the browse filters find
each by person, token and door; the search result card carries the same line."""

from __future__ import annotations

import httpx
import pytest
from django.core.cache import cache
from playwright.sync_api import expect

from apps.access.services import token_create
from apps.memories.models import Memory

from .conftest import login, shoot

pytestmark = pytest.mark.django_db(transaction=True)

BY_HAND = "Staging certificates are renewed by the ops rota on the first Monday."
BY_TOKEN = "The nightly export lands in the archive bucket by four."


def test_the_memory_page_and_browse_show_and_filter_provenance(page, asgi_server, admin_user, acme):
    cache.clear()
    _, raw = token_create(name="ci-writer", namespaces=[acme])
    response = httpx.post(
        f"{asgi_server}/api/v1/memories/",
        json={"namespace": "acme", "content": BY_TOKEN},
        headers={"Authorization": f"Bearer {raw}"},
    )
    assert response.status_code == 201, response.text
    login(page, "admin")

    page.goto("/ns/acme/memories/new/")
    page.fill("textarea[name=content]", BY_HAND)
    page.fill("input[name=source_url]", "https://wiki.example.org/certificates")
    page.locator("form button[type=submit].primary").click()
    page.wait_for_url("**/memories/*/")
    box = page.locator("#provenance")
    expect(box).to_contain_text("written by admin via the web UI")
    expect(box).to_contain_text("ui")
    expect(box.locator("a[href='https://wiki.example.org/certificates']")).to_have_count(1)
    shoot(page, "memory-provenance")

    written = Memory.objects.get(content=BY_TOKEN)
    page.goto(f"/memories/{written.pk}/")
    expect(page.locator("#provenance")).to_contain_text("written by the token ci-writer via REST")

    rows = page.locator("td.memcell")
    page.goto("/ns/acme/memories/?person=admin")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("Staging certificates")
    page.goto("/ns/acme/memories/?credential=ci-writer")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("written by the token ci-writer")
    page.goto("/ns/acme/memories/?door=ui")
    expect(rows).to_have_count(1)
    page.goto("/ns/acme/memories/")
    page.locator("form.filterbar select[name=door]").select_option("rest")  # htmx, on change
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("nightly export")
    shoot(page, "browse-provenance-filter")

    page.goto("/?namespace=acme&q=when+are+staging+certificates+renewed")
    first = page.locator("ol.results li.result").first
    expect(first.locator(".provenance")).to_contain_text("written by admin via the web UI")
    # The search form's filters: only what the token wrote.
    page.goto("/?namespace=acme&q=nightly+export+archive+bucket&credential=ci-writer")
    expect(page.locator("ol.results li.result")).to_have_count(1)
    expect(page.locator("ol.results")).to_contain_text("nightly export")
    expect(page.locator("details.filters input[name=credential]")).to_have_value("ci-writer")
    page.goto("/?namespace=acme&q=nightly+export+archive+bucket&person=admin")
    expect(page.locator("ol.results")).not_to_contain_text("nightly export")
