"""In a real browser: log in, search, explain, feedback."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from apps.search import querylog
from apps.search.models import QueryLog

from .conftest import login, shoot

pytestmark = pytest.mark.django_db(transaction=True)


def test_login_page_then_search_page(page, admin_user, acme):
    page.goto("/")
    expect(page).to_have_url(re.compile(r"/login/\?next=/$"))
    shoot(page, "login")
    login(page, "admin")
    expect(page.locator("input[name=q]")).to_be_visible()
    expect(page.locator("header")).to_contain_text("admin")


def test_wrong_password_is_refused(page, admin_user):
    page.goto("/login/")
    page.fill("input[name=username]", "admin")
    page.fill("input[name=password]", "not-the-password")
    page.click("button[type=submit]")
    expect(page.locator(".error")).to_contain_text("correct username and password")


def test_search_shows_result_with_flags_and_explain(page, admin_user, acme):
    login(page, "admin")
    page.goto("/?namespace=acme")
    page.fill("input[name=q]", "where do sessions live, redis or postgres?")
    page.click(".querybar button[type=submit]")
    first = page.locator("li.result").first
    expect(first).to_be_visible()
    expect(page.locator("#results")).to_contain_text("Use Redis for the session cache")
    # The two session memories contradict each other: flagged at a glance.
    expect(page.locator(".banner.contra")).to_be_visible()
    expect(page.locator("li.result.contradicted")).to_have_count(2)
    # Markdown rendered: **sessions in Redis** became <strong>.
    expect(page.locator("li.result strong", has_text="sessions in Redis")).to_be_visible()
    shoot(page, "search")

    page.click("text=Explain ranking")
    expect(page.locator("h1")).to_have_text("Why these results ranked")
    table = page.locator("table.explain")
    expect(table.locator("th", has_text="semantic")).to_be_visible()
    expect(table.locator("td.strategy b", has_text=re.compile(r"#\d+")).first).to_be_visible()
    expect(page.locator("text=Stage timings")).to_be_visible()
    shoot(page, "explain")


def test_feedback_is_recorded(page, admin_user, acme):
    login(page, "admin")
    page.goto("/?namespace=acme&q=migrations+import+window")
    result = page.locator("li.result").first
    memory_id = result.get_attribute("data-id")
    result.locator("button", has_text="Not useful").click()
    expect(result.locator(".recorded")).to_have_text("Recorded: not useful")
    querylog.flush()
    log = QueryLog.objects.filter(namespace=acme, query="migrations import window").get()
    assert log.result_feedback == {memory_id: False}


def test_evidence_gap_warning_is_visible(page, admin_user, acme):
    login(page, "admin")
    page.goto("/?namespace=acme&q=favourite+colour+of+the+office+cat")
    expect(page.locator(".banner.gap")).to_contain_text("Evidence gap")


def test_bad_filter_is_named_next_to_the_field(page, admin_user, acme):
    login(page, "admin")
    page.goto("/?namespace=acme&q=cache&time_expr=blorp+zorp")
    expect(page.locator("#results")).to_contain_text("time_expr")
