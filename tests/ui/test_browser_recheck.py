"""In a real browser: a memory whose basis was superseded says so in search results and waits
in the Re-check queue; "Still true" takes it out, the banner's Undo puts it back, and Archive
(undone from the history) does the same through the write path."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from playwright.sync_api import expect

from apps.memories.models import Memory, RecheckMark
from apps.memories.services import memory_create

from .conftest import login, shoot

pytestmark = pytest.mark.django_db(transaction=True)


def _supersede_redis(acme) -> tuple[Memory, Memory]:
    redis = Memory.objects.get(namespace=acme, title="Use Redis for the session cache")
    cache_rule = Memory.objects.get(namespace=acme, title="Cache invalidation on write")
    memory_create(
        namespace=acme,
        content="Sessions are cached in Memcached now; Redis was retired.",
        supersedes=[str(redis.pk)],
    )
    return redis, cache_rule


def test_search_shows_the_basis_changed(page, admin_user, acme):
    redis, cache_rule = _supersede_redis(acme)
    login(page, "admin")
    page.goto("/?namespace=acme&q=cache+invalidation+on+write")
    line = page.locator(".basis-changed").first
    expect(line).to_contain_text("its basis changed on")
    expect(line).to_contain_text("superseded")
    expect(line.locator("a")).to_have_attribute("href", f"/memories/{redis.pk}/")
    shoot(page, "search-basis-changed")
    # Only the memory that rests on the change carries the line.
    expect(page.locator(".basis-changed")).to_have_count(1)


def test_recheck_queue_confirm_undo_and_archive(page, admin_user, acme):
    cache.clear()
    redis, cache_rule = _supersede_redis(acme)
    login(page, "admin")
    page.goto("/ns/acme/queues/recheck/")
    expect(page.locator("#nav-recheck-count")).to_have_text("1")
    row = page.locator(f"tr[data-memory='{cache_rule.pk}']")
    expect(row).to_contain_text("Use Redis for the session cache")
    expect(row).to_contain_text("superseded")
    shoot(page, "queue-recheck")

    row.locator("button:has-text('Still true')").click()
    expect(page.locator(".messages")).to_contain_text("still holds")
    expect(page.locator(f"tr[data-memory='{cache_rule.pk}']")).to_have_count(0)
    expect(page.locator("#nav-recheck-count")).to_have_text("0")
    assert not RecheckMark.objects.filter(memory=cache_rule).exists()

    page.locator("#recheck-undo button:has-text('Undo')").click()
    expect(page.locator(".messages")).to_contain_text("Decision undone")
    expect(page).to_have_url(f"{page.url.split('/ns/')[0]}/ns/acme/queues/recheck/")
    expect(page.locator(f"tr[data-memory='{cache_rule.pk}']")).to_have_count(1)
    mark = RecheckMark.objects.get(memory=cache_rule)
    assert (mark.basis_id, mark.reason) == (redis.pk, "superseded")

    page.locator(f"tr[data-memory='{cache_rule.pk}'] button:has-text('Archive')").click()
    expect(page.locator(".messages")).to_contain_text("Archived")
    expect(page.locator(f"tr[data-memory='{cache_rule.pk}']")).to_have_count(0)
    cache_rule.refresh_from_db()
    assert cache_rule.archived
    page.goto(f"/memories/{cache_rule.pk}/history/")
    page.locator("li.revision").first.locator("button:has-text('Undo this change')").click()
    expect(page.locator(".messages")).to_contain_text("Change undone")
    page.goto("/ns/acme/queues/recheck/")
    expect(page.locator(f"tr[data-memory='{cache_rule.pk}']")).to_have_count(1)
