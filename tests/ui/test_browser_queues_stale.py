"""In a real browser: act on a stale memory; turn a missed search into a memory and see the
next search for that query answered without the evidence-gap flag."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone
from playwright.sync_api import expect

from apps.history.selectors import revisions_for_memory
from apps.memories.models import Memory
from apps.search.models import QueryLog
from apps.search.services import search

from .conftest import login, shoot

pytestmark = pytest.mark.django_db(transaction=True)

QUESTION = "What is the guest wifi password in the office?"
ANSWER = "The guest wifi password in the office is blue-falcon-42; it changes every quarter."


def test_refresh_and_archive_stale_memories(page, admin_user, acme):
    cache.clear()
    redis = Memory.objects.get(namespace=acme, title="Use Redis for the session cache")
    Memory.objects.filter(pk=redis.pk).update(stability=0.03)
    old = Memory.objects.exclude(pk=redis.pk).filter(namespace=acme).first()
    Memory.objects.filter(pk=old.pk).update(
        tier="scratch", created_at=timezone.now() - timedelta(days=40)
    )
    login(page, "admin")
    page.goto("/ns/acme/queues/stale/")
    expect(page.locator("#nav-stale-count")).to_have_text("2")
    row = page.locator(f"tr[data-memory='{redis.pk}']")
    expect(row).to_contain_text("decayed")
    shoot(page, "queue-stale")
    row.locator("button:has-text('Refresh')").click()
    expect(page.locator(".messages")).to_contain_text("Refreshed: 1 memory.")
    expect(page.locator(f"tr[data-memory='{redis.pk}']")).to_have_count(0)
    redis.refresh_from_db()
    assert redis.stability == 1.0
    assert revisions_for_memory(redis).first().after["stability"] == 1.0
    # The refresh is a revision, and undoing it from the history puts the decay back.
    page.goto(f"/memories/{redis.pk}/history/")
    page.locator("li.revision").first.locator("button:has-text('Undo this refresh')").click()
    expect(page.locator(".messages")).to_contain_text("Refresh undone")
    redis.refresh_from_db()
    assert redis.stability == pytest.approx(0.03)
    assert revisions_for_memory(redis).first().action == "restore"
    page.goto("/ns/acme/queues/stale/")
    expect(page.locator(f"tr[data-memory='{redis.pk}']")).to_have_count(1)
    page.locator(f"tr[data-memory='{redis.pk}'] button:has-text('Refresh')").click()
    expect(page.locator(".messages")).to_contain_text("Refreshed: 1 memory.")

    # "Select all" ticks every row (behaviour.js; the CSP refuses inline handlers), then one
    # box is unticked again.
    page.locator("#stale input[aria-label='Select all']").check()
    expect(page.locator("#stale input[name=ids]:checked")).to_have_count(
        page.locator("#stale input[name=ids]").count()
    )
    page.locator("#stale input[aria-label='Select all']").uncheck()
    expect(page.locator("#stale input[name=ids]:checked")).to_have_count(0)
    page.locator(f"tr[data-memory='{old.pk}'] input[name=ids]").check()
    page.select_option("select[name=action]", "archive")
    page.click("button:has-text('Apply')")
    expect(page.locator(".messages")).to_contain_text("Archived: 1 memory.")
    expect(page.locator("#nav-stale-count")).to_have_text("0")
    old.refresh_from_db()
    assert old.archived
    # The archive is in the memory's history, and undoing it there puts it back in the queue.
    page.goto(f"/memories/{old.pk}/history/")
    first = page.locator("li.revision").first
    expect(first).to_contain_text("archive")
    first.locator("button:has-text('Undo this change')").click()
    expect(page.locator(".messages")).to_contain_text("Change undone")
    page.goto("/ns/acme/queues/stale/")
    expect(page.locator(f"tr[data-memory='{old.pk}']")).to_have_count(1)


def test_write_the_missing_memory_from_the_missed_searches_queue(page, admin_user, acme, settings):
    cache.clear()
    settings.SEARCH_QUERYLOG_SYNC = True
    first = search(namespace=acme, query=QUESTION)
    assert first.flags["evidence_gap"], "the seed namespace should not know the wifi password"
    assert QueryLog.objects.filter(namespace=acme, query=QUESTION).exists()

    login(page, "admin")
    page.goto("/ns/acme/queues/missed/")
    group = page.locator("tr.missed-group", has_text=QUESTION)
    expect(group).to_have_count(1)
    shoot(page, "queue-missed")
    group.locator("a:has-text('Write the memory')").click()
    expect(page.locator("textarea[name=content]")).to_have_value(QUESTION)
    page.fill("textarea[name=content]", ANSWER)
    page.fill("input[name=title]", "Office guest wifi")
    page.click("button:has-text('Create')")
    expect(page.locator(".msg")).to_contain_text(["Memory created."])

    after = search(namespace=acme, query=QUESTION)
    assert not after.flags["evidence_gap"]
    assert after.memories[0]["content"] == ANSWER
    # Its latest search found the answer: the query leaves the queue.
    page.goto("/ns/acme/queues/missed/")
    expect(page.locator("tr.missed-group", has_text=QUESTION)).to_have_count(0)
