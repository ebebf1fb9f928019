"""Every page on a 390 px phone and on a desktop: nothing wider than the screen, the menu opens,
no console error or CSP violation (the page fixtures fail a test on any); controls that need a
script work under the CSP (the Members role, the Connect copy buttons)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from playwright.sync_api import expect

from apps.access.models import NamespaceMembership, Role
from apps.memories import services
from apps.memories.models import Memory
from apps.ui.demo_queues import seed_queues

from .conftest import PHONE, login, make_user, shoot, watched

pytestmark = pytest.mark.django_db(transaction=True)

SESSION = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
TURNS = [
    "Ana: Did the night import finish before the migration window opened?",
    "Ben: Yes, it ended at 01:40, well before the window at 02:00 UTC.",
]
# Wide content a phone must hold inside the card: a long code line and a markdown table with
# aligned columns (the parser writes the alignment as a style attribute the CSP refuses).
WIDE = (
    "Release notes table:\n\n| Version | Date | Notes |\n|:--|:-:|--:|\n"
    "| 2.4.1 | 2026-03-02 | sessions moved back to Postgres |\n\n"
    "```\n" + "curl -H 'Authorization: Bearer mh_…' " * 6 + "\n```\n"
    "https://example.org/" + "a-very-long-path-segment/" * 8
)


@pytest.fixture
def seeded(acme, admin_user):
    """The browser tests' namespace plus dialog turns without titles, wide content and
    something in every queue; the admin owns it."""
    services.memory_batch_create(
        namespace=acme,
        items=[
            {
                "id": f"conv:D1:{i}",
                "content": text,
                "created_at": SESSION.isoformat(),
                "tags": ["session-1"],
            }
            for i, text in enumerate(TURNS, start=1)
        ],
        check_near_duplicates=False,
    )
    services.memory_create(namespace=acme, title="Release notes", content=WIDE)
    seed_queues(acme)
    NamespaceMembership.objects.create(user=admin_user, namespace=acme, role=Role.OWNER)
    return acme


def fits(page) -> None:
    """No sideways scrolling: the document is no wider than the window."""
    width, inner = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width <= inner, f"{page.url} is {width} px wide in a {inner} px window: {wider(page)}"


# The innermost elements that reach past the window's right edge: what to fix.
WIDER = """() => {
  const out = (e) => e.getBoundingClientRect().right > window.innerWidth + 1;
  return [...document.querySelectorAll("body *")]
    .filter((e) => out(e) && ![...e.children].some(out))
    .slice(0, 8)
    .map((e) => `${e.tagName}.${e.className} ${Math.round(e.getBoundingClientRect().right)}px`);
}"""


def wider(page) -> list[str]:
    return page.evaluate(WIDER)


def nav_pages(page, phone: bool) -> list[str]:
    """Every page the navigation reaches (menus opened as a person would)."""
    if phone:
        toggle = page.locator("button[data-nav-toggle]")
        expect(toggle).to_be_visible()
        toggle.click()
        expect(page.locator("#navpanel")).to_be_visible()
    page.locator("details.navmenu summary").click()
    page.locator("details.usermenu summary").click()
    links = page.locator("#navpanel a")
    for i in range(links.count()):
        expect(links.nth(i)).to_be_visible()
    hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
    return [h for h in dict.fromkeys(hrefs) if h and h.startswith("/")]


def visit_everything(page, *, phone: bool) -> list[str]:
    page.goto("/login/")
    fits(page)
    login(page, "admin")
    page.goto("/?namespace=acme")
    visited = nav_pages(page, phone)
    # search, browse, create, trash, transfer, 4 queues, graph, analytics, members, connect,
    # password, connected apps, admin
    assert len(visited) >= 16, visited
    turn = Memory.objects.get(external_id="conv:D1:1")
    wide = Memory.objects.get(title="Release notes")
    handbook = Memory.objects.filter(file_path="docs/handbook.md").first()
    visited += [
        "/?namespace=acme&q=when+did+the+night+import+finish",
        "/explain/?namespace=acme&q=when+did+the+night+import+finish",
        f"/memories/{turn.pk}/",
        f"/memories/{wide.pk}/",
        f"/memories/{handbook.pk}/",
        f"/memories/{turn.pk}/history/",
    ]
    for url in visited:
        page.goto(url)
        expect(page.locator("main")).to_be_visible()
        fits(page)
    return visited


def test_every_page_fits_a_phone_and_the_menu_opens(phone, seeded):
    visited = visit_everything(phone, phone=True)
    # The search row fits: its button is on the screen.
    phone.goto(visited[-6])
    button = phone.locator(".querybar button[type=submit]")
    box = button.bounding_box()
    assert box and box["x"] + box["width"] <= PHONE["width"]
    expect(phone.locator("li.result").first).to_be_visible()
    shoot(phone, "phone-search")
    phone.locator("button[data-nav-toggle]").click()
    expect(phone.locator("#navpanel a:has-text('Browse')")).to_be_visible()
    shoot(phone, "phone-menu")
    phone.goto(visited[-4])
    shoot(phone, "phone-memory")
    phone.goto("/ns/acme/queues/stale/")
    fits(phone)
    shoot(phone, "phone-stale")


def test_every_page_fits_a_tablet(browser, asgi_server, seeded):
    """Between phone and desktop (the menu folded, the page margins of a desktop)."""
    with watched(browser, asgi_server, {"width": 820, "height": 1100}) as tablet:
        visit_everything(tablet, phone=True)


def test_every_page_runs_cleanly_on_a_desktop(page, seeded):
    # A long namespace name in the switch: the bar wraps inside itself rather than overflow.
    services.namespace_get_or_create(name="a-rather-long-namespace-name-for-the-team-wiki")
    visit_everything(page, phone=False)
    expect(page.locator("button[data-nav-toggle]")).to_be_hidden()


def test_untitled_turns_and_links_are_named_in_words(page, seeded):
    """A dialog turn without a title is named by its speaker and first words on every page;
    history names a link's other end; never-edited memories say so."""
    first, second = (Memory.objects.get(external_id=f"conv:D1:{i}") for i in (1, 2))
    services.edge_create(source=second, target=first, relation="relates_to")
    login(page, "admin")
    page.goto("/?namespace=acme&q=did+the+night+import+finish")
    result = page.locator(f"li.result[data-id='{first.pk}']")
    expect(result.locator("a.title")).to_have_text(
        "Ana: Did the night import finish before the migration…"
    )
    expect(result).not_to_contain_text("edited")
    expect(page.locator("#results")).not_to_contain_text("(untitled)")
    page.goto(f"/memories/{second.pk}/")
    expect(page.locator("h1")).to_have_text(re.compile(r"^Ben: Yes, it ended at 01:40"))
    expect(page.locator("#links")).to_contain_text("Ana: Did the night import")
    expect(page.locator("dl.kv")).to_contain_text("never edited")
    history = page.locator("#history")
    expect(history.locator(".change:has([data-field=edge])")).to_contain_text(
        "this memory relates_to “Ana: Did the night import"
    )
    assert str(first.pk)[:8] not in history.inner_text()


def test_a_role_change_survives_a_reload(page, acme):
    owner = make_user("olivia")
    eddie = make_user("eddie")
    NamespaceMembership.objects.create(user=owner, namespace=acme, role=Role.OWNER)
    NamespaceMembership.objects.create(user=eddie, namespace=acme, role=Role.VIEWER)
    login(page, "olivia")
    page.goto("/ns/acme/members/")
    role = page.locator("select[aria-label='Role of eddie']")
    expect(role).to_have_value("viewer")
    with page.expect_navigation():
        role.select_option("editor")  # submits on change, no button
    expect(page.locator(".messages")).to_contain_text("eddie is now editor.")
    page.reload()
    expect(page.locator("select[aria-label='Role of eddie']")).to_have_value("editor")
    assert NamespaceMembership.objects.get(user=eddie, namespace=acme).role == Role.EDITOR


def test_connect_copy_buttons_copy_the_token_and_snippets(page, admin_user, acme):
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    login(page, "admin")
    page.goto("/ns/acme/connect/")
    page.fill("input[name=name]", "phone")
    page.click("button:has-text('Create token')")
    raw = page.locator("#new-token").inner_text().strip()
    page.click("button[data-copy='#new-token']")
    expect(page.locator("button[data-copy='#new-token']")).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == raw
    page.click("button[data-copy=\"pre[data-client='curl']\"]")
    assert raw in page.evaluate("navigator.clipboard.readText()")


def test_favicon_is_served(page, admin_user):
    login(page, "admin")
    response = page.request.get("/favicon.ico")
    assert response.ok
    assert response.headers["content-type"].startswith("image/svg")


def test_an_upload_shows_one_bar_and_names_the_repeated_line(page, admin_user, acme, tmp_path):
    line = '{"content": "Rollbacks use the previous image.", "created_at": "2024-02-01T10:00:00Z"}'
    other = '{"content": "Rollbacks take five minutes.", "created_at": "2024-02-01T10:05:00Z"}'
    path = tmp_path / "notes.jsonl"
    path.write_text(f"{line}\n{other}\n{line}\n")
    login(page, "admin")
    page.goto("/ns/acme/transfer/")
    page.set_input_files("#import-file", str(path))
    page.click("#import-form button[type=submit]")
    expect(page.locator("#import-result")).to_contain_text("Imported: 2 new, 0 already stored")
    # The line repeated in the file is named, not hidden among "already stored".
    expect(page.locator("#import-repeats")).to_have_text(
        "1 line of the file repeated an earlier line (the same id, or the same text at the same "
        "time) and was skipped: line 3."
    )
    # One bar: the upload's gives way to the import's, which ends full.
    expect(page.locator("progress:visible")).to_have_count(1)
    expect(page.locator("#upload-progress")).to_be_hidden()
    expect(page.locator("#import-progress")).to_have_js_property("position", 1)
