"""In a real browser: create, edit, link, delete, bulk archive, connect an assistant; and the
round trip "find it, see why, correct it" that an assistant then sees over MCP."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

import pytest
from playwright.sync_api import expect

from apps.access.services import token_authenticate
from apps.memories.models import CausalEdge, Memory
from tests.mcp.client import http_client, run, text_of

from .conftest import login, shoot

pytestmark = pytest.mark.django_db(transaction=True)


def test_create_shows_inferred_tags_and_edit_saves(page, admin_user, acme):
    login(page, "admin")
    page.goto("/ns/acme/memories/new/")
    page.fill("input[name=title]", "Login page crash")
    page.fill("textarea[name=content]", "Fixed the crash when the login form is empty.")
    expect(page.locator("#inferred .tag")).to_have_text(["bugfix"])
    page.select_option("select[name=category]", "learning")
    page.fill("input[name=tags]", "auth")
    shoot(page, "create")
    page.click("button:has-text('Create')")
    expect(page.locator(".msg")).to_contain_text(["Memory created.", "bugfix"])
    memory = Memory.objects.get(namespace=acme, title="Login page crash")
    assert set(memory.tags.values_list("name", flat=True)) == {"auth", "bugfix"}

    page.click("a.button:has-text('Edit')")
    page.fill("textarea[name=content]", "Fixed the crash when the login form is submitted empty.")
    page.click("button:has-text('Save')")
    expect(page.locator(".messages")).to_contain_text("Saved: content.")
    expect(page.locator(".content.md")).to_contain_text("submitted empty")
    memory.refresh_from_db()
    assert memory.content.endswith("submitted empty.")


def test_create_reports_field_errors_next_to_the_field(page, admin_user, acme):
    login(page, "admin")
    page.goto("/ns/acme/memories/new/")
    page.fill("textarea[name=content]", "Tagged badly.")
    page.fill("input[name=tags]", "Not A Tag!")
    page.click("button:has-text('Create')")
    expect(page.locator(".field.has-error")).to_contain_text("not a valid tag")
    assert not Memory.objects.filter(namespace=acme, content="Tagged badly.").exists()


def test_near_duplicate_offers_a_choice(page, admin_user, acme):
    login(page, "admin")
    page.goto("/ns/acme/memories/new/")
    original = Memory.objects.get(namespace=acme, title="Cache invalidation on write")
    page.fill("textarea[name=content]", original.content.replace("a minute", "one minute"))
    page.fill("input[name=title]", "Cache invalidation on write (again)")
    page.click("button:has-text('Create')")
    expect(page.locator(".banner.contra")).to_contain_text("Near-duplicates found")
    shoot(page, "near-duplicate")
    page.click("button:has-text('Store and supersede')")
    expect(page.locator(".messages")).to_contain_text("Memory created.")
    new = Memory.objects.get(namespace=acme, title="Cache invalidation on write (again)")
    assert CausalEdge.objects.filter(source=new, target=original, relation="supersedes").exists()


def test_memory_page_links_and_unlinks(page, admin_user, acme):
    login(page, "admin")
    memory = Memory.objects.get(namespace=acme, title="Embeddings are normalised")
    page.goto(f"/memories/{memory.pk}/")
    expect(page.locator("h1")).to_have_text("Embeddings are normalised")
    page.fill(".linkform input[type=search]", "migrations import window")
    expect(page.locator("#link-candidates .candidate").first).to_be_visible()
    page.select_option("select[name=relation]", "relates_to")
    page.click(".linkform button:has-text('Link')")
    expect(page.locator(".messages")).to_contain_text("Linked.")
    expect(page.locator("ul.edges").first).to_contain_text("Never run migrations")
    shoot(page, "memory")
    page.click("ul.edges button:has-text('unlink')")
    expect(page.locator(".messages")).to_contain_text("Link removed.")
    assert not CausalEdge.objects.filter(source=memory).exists()


def test_browse_filters_chunked_document_and_bulk_archive(page, admin_user, acme):
    login(page, "admin")
    page.goto("/ns/acme/memories/")
    # The handbook is stored as several chunks but listed once.
    expect(page.locator("td.memcell", has_text="Operations handbook")).to_have_count(1)
    page.locator("details.chunks summary").click()
    expect(page.locator(".chunkitems li").first).to_be_visible()
    shoot(page, "browse")

    page.select_option("select[name=category]", "decision")
    expect(page.locator("table.list tbody tr")).to_have_count(2)
    page.locator("input[name=ids]").first.check()
    page.locator("input[name=ids]").nth(1).check()
    page.select_option(".bulkbar select[name=action]", "archive")
    page.click(".bulkbar button:has-text('Apply')")
    expect(page.locator(".messages")).to_contain_text("archive: 2 memories.")
    assert Memory.objects.filter(namespace=acme, category="decision", archived=True).count() == 2
    expect(page.locator("table.list tbody")).to_contain_text("No memories match")


def test_delete_from_memory_page(page, admin_user, acme):
    login(page, "admin")
    memory = Memory.objects.get(namespace=acme, title="Embeddings are normalised")
    page.goto(f"/memories/{memory.pk}/")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("button.danger:has-text('Delete')")
    expect(page).to_have_url(re.compile(r"/ns/acme/memories/$"))
    assert not Memory.objects.filter(pk=memory.pk).exists()


def test_connect_an_assistant_creates_a_working_token(page, admin_user, acme, asgi_server):
    login(page, "admin")
    page.goto("/ns/acme/connect/")
    page.fill("input[name=name]", "laptop")
    page.click("button:has-text('Create token')")
    raw = page.locator("#new-token").inner_text().strip()
    assert raw.startswith("mh_")
    assert token_authenticate(raw) is not None
    expect(page.locator("pre[data-client=claude-code-http]")).to_contain_text(f"{asgi_server}/mcp")
    expect(page.locator("pre[data-client=curl]")).to_contain_text(raw)
    shoot(page, "connect")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("button:has-text('Revoke')")
    expect(page.locator(".messages")).to_contain_text("revoked")
    assert token_authenticate(raw) is None


def test_find_explain_correct_and_the_assistant_sees_it(page, admin_user, acme, asgi_server):
    login(page, "admin")
    page.goto("/?namespace=acme&q=how+long+do+sessions+live+in+redis")
    page.click("li.result a.title:has-text('Use Redis for the session cache')")
    memory_url = page.url
    page.go_back()
    page.click("text=Explain ranking")
    expect(page.locator("table.explain")).to_contain_text("Use Redis for the session cache")
    page.goto(memory_url)
    page.click("a.button:has-text('Edit')")
    content = page.locator("textarea[name=content]").input_value()
    page.fill("textarea[name=content]", content.replace("14-day TTL", "30-day TTL"))
    page.click("button:has-text('Save')")
    expect(page.locator(".content.md")).to_contain_text("30-day TTL")

    # The assistant's next search over MCP returns the corrected text.
    page.goto("/ns/acme/connect/")
    page.click("button:has-text('Create token')")
    raw = page.locator("#new-token").inner_text().strip()

    async def scenario():
        async with http_client(asgi_server, raw) as client:
            return await client.call_tool(
                "memory_search", {"query": "how long do sessions live in redis"}
            )

    # Playwright's sync API owns this thread's event loop: the MCP client runs in another.
    with ThreadPoolExecutor(1) as pool:
        text = text_of(pool.submit(run, scenario).result())
    assert "30-day TTL" in text and "14-day TTL" not in text
