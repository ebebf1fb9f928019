"""In a real browser: create, edit, link, delete, bulk archive, connect an assistant; and the
round trip "find it, see why, correct it" that an assistant then sees over MCP."""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor

import pytest
from playwright.sync_api import expect

from apps.access.models import NamespaceMembership, Role
from apps.access.services import token_authenticate
from apps.memories.models import CausalEdge, Memory
from tests.mcp.client import http_client, run, text_of

from .conftest import login, make_user, shoot

pytestmark = pytest.mark.django_db(transaction=True)


def test_create_edit_and_restore_an_old_version(page, admin_user, acme):
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

    # The memory page shows the history; restoring the first version undoes the edit.
    history = page.locator("#history li.revision")
    expect(history).to_have_count(2)
    history.nth(1).locator("button:has-text('Restore this version')").click()
    expect(page.locator(".messages")).to_contain_text("Restored that version")
    memory.refresh_from_db()
    assert memory.content == "Fixed the crash when the login form is empty."


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


def test_delete_and_restore_from_trash(page, admin_user, acme):
    login(page, "admin")
    memory = Memory.objects.get(namespace=acme, title="Embeddings are normalised")
    page.goto(f"/memories/{memory.pk}/")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("button.danger:has-text('Delete')")
    expect(page).to_have_url(re.compile(r"/ns/acme/memories/$"))
    assert not Memory.objects.filter(pk=memory.pk).exists()

    page.click("header a:has-text('Trash')")
    row = page.locator("table.list tbody tr", has_text="Embeddings are normalised")
    expect(row).to_contain_text("admin")
    shoot(page, "trash")
    row.locator("button:has-text('Restore')").click()
    expect(page.locator(".messages")).to_contain_text("Restored from the trash")
    expect(page).to_have_url(re.compile(rf"/memories/{memory.pk}/$"))
    restored = Memory.objects.get(pk=memory.pk)
    assert set(restored.tags.values_list("name", flat=True)) == {"search", "embeddings"}


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
    # Claude Desktop over HTTP, as docs/using.md gives it: valid JSON, this server, the token.
    desktop = json.loads(page.locator("pre[data-client=claude-desktop-http]").inner_text())
    server = desktop["mcpServers"]["memoryhub"]
    assert server["command"] == "npx" and f"{asgi_server}/mcp" in server["args"]
    assert server["env"] == {"MEMORYHUB_TOKEN": raw}
    # OAuth is told in words, not as a path into the repository.
    oauth = page.locator("section.card", has_text="Apps you connected with OAuth")
    expect(oauth).to_contain_text("add a custom connector with the address")
    expect(oauth).not_to_contain_text("docs/oauth.md")
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

    def assistant_search() -> str:
        async def scenario():
            async with http_client(asgi_server, raw) as client:
                return await client.call_tool(
                    "memory_search", {"query": "how long do sessions live in redis"}
                )

        # Playwright's sync API owns this thread's event loop: the MCP client runs in another.
        with ThreadPoolExecutor(1) as pool:
            return text_of(pool.submit(run, scenario).result())

    text = assistant_search()
    assert "30-day TTL" in text and "14-day TTL" not in text

    # The change is in the history, readable as a diff, and can be undone.
    page.goto(memory_url)
    page.click("a:has-text('Full history')")
    latest = page.locator("li.revision").first
    expect(latest).to_contain_text("admin")
    expect(latest).to_contain_text("via ui")
    expect(latest.locator(".diff del")).to_have_text("14-day")
    expect(latest.locator(".diff ins")).to_have_text("30-day")
    shoot(page, "history")
    # The newest older version (links are not versions; they have no restore button).
    page.locator("li.revision button:has-text('Restore this version')").first.click()
    expect(page.locator(".messages")).to_contain_text("Restored that version")
    expect(page.locator("li.revision").first).to_contain_text("restore")
    text = assistant_search()
    assert "14-day TTL" in text and "30-day TTL" not in text


def test_viewer_sees_no_edit_controls_and_a_post_is_refused(page, acme):
    viewer = make_user("vera")
    NamespaceMembership.objects.create(user=viewer, namespace=acme, role=Role.VIEWER)
    memory = Memory.objects.get(namespace=acme, title="Use Redis for the session cache")
    login(page, "vera")
    page.goto(f"/memories/{memory.pk}/")
    expect(page.locator("h1")).to_have_text("Use Redis for the session cache")
    expect(page.locator("a:has-text('Edit')")).to_have_count(0)
    expect(page.locator("button:has-text('Delete')")).to_have_count(0)
    expect(page.locator("header .role")).to_have_text("viewer")
    page.goto("/?namespace=acme&q=redis+sessions")
    expect(page.locator("li.result").first).to_be_visible()
    expect(page.locator("li.result a:has-text('Edit')")).to_have_count(0)
    expect(page.locator("li.result button:has-text('Useful')").first).to_be_visible()
    csrf = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    response = page.request.post(
        f"/memories/{memory.pk}/edit/",
        form={"content": "hijacked", "category": "note", "tier": "normal", "importance": "0.5"},
        headers={"X-CSRFToken": csrf, "Referer": page.url},
    )
    assert response.status == 403
    memory.refresh_from_db()
    assert "hijacked" not in memory.content


def test_owner_manages_members(page, acme):
    owner = make_user("olivia")
    NamespaceMembership.objects.create(user=owner, namespace=acme, role=Role.OWNER)
    make_user("eddie")
    login(page, "olivia")
    page.click("header a:has-text('Members')")
    page.fill("input[name=username][type=text]", "eddie")
    page.select_option("form:has(input[name=username][type=text]) select[name=role]", "editor")
    page.click("button:has-text('Add or change')")
    expect(page.locator(".messages")).to_contain_text("eddie is now editor.")
    shoot(page, "members")
    assert NamespaceMembership.objects.get(user__username="eddie", namespace=acme).role == "editor"
