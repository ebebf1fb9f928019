"""In a real browser: a possible update waits in the conflicts queue and one click supersedes
it; the memory page shows the timeline; search as of a date (the date picker) answers with the
old fact; browse filters current / superseded; the history's undo re-opens the old fact."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from playwright.sync_api import expect

from apps.memories import services
from apps.memories.models import Memory

from .conftest import login, shoot

pytestmark = pytest.mark.django_db(transaction=True)

OLD = "Container images are stored in Docker Hub."
NEW = "Container images moved from Docker Hub to GitHub Container Registry."


def test_supersede_a_possible_update_then_read_the_past(page, admin_user, acme):
    cache.clear()
    old = services.memory_create(namespace=acme, content=OLD, created_at="2025-03-01").memory
    written = services.memory_create(namespace=acme, content=NEW, created_at="2025-06-01")
    assert [u["id"] for u in written.possible_updates] == [str(old.pk)]
    login(page, "admin")

    page.goto("/ns/acme/queues/conflicts/")
    card = page.locator("section.conflict", has_text="stored in Docker Hub")
    expect(card).to_have_count(1)
    shoot(page, "queue-possible-update")
    card.locator("button:has-text('Supersede')").click()
    expect(page.locator(".messages")).to_contain_text("Superseded")
    old.refresh_from_db()
    assert old.valid_until is not None and not old.archived

    page.goto(f"/memories/{written.memory.pk}/")
    timeline = page.locator("section.timeline")
    expect(timeline.locator("li")).to_have_count(2)
    expect(timeline.locator("li").first).to_contain_text("Docker Hub")
    expect(timeline.locator("li").first).to_contain_text("2025-03-01 → 2025-06-01")
    shoot(page, "memory-timeline")
    page.set_viewport_size({"width": 390, "height": 844})
    expect(timeline.locator("li").first).to_be_visible()
    shoot(page, "memory-timeline-390")
    page.set_viewport_size({"width": 1280, "height": 900})

    page.goto("/?namespace=acme&q=Where+are+container+images+stored%3F")
    results = page.locator("ol.results li.result")
    expect(results.first).to_contain_text("GitHub Container Registry")
    expect(results.first.locator(".validity")).to_contain_text("replaces")
    old_as_result = page.locator("ol.results .content", has_text="are stored in Docker Hub")
    expect(old_as_result).to_have_count(0)

    page.locator("details.filters summary").click()
    page.fill("input[name=as_of]", "2025-04-15T12:00")  # the date and time picker
    page.locator("form.searchform button[type=submit]").click()
    expect(results.first).to_contain_text("stored in Docker Hub")
    expect(page.locator("ol.results")).not_to_contain_text("GitHub Container Registry")
    expect(page.locator("ol.results .validity")).to_have_count(0)  # nothing replaced it yet
    shoot(page, "search-as-of")
    page.set_viewport_size({"width": 390, "height": 844})
    shoot(page, "search-as-of-390")
    page.set_viewport_size({"width": 1280, "height": 900})

    page.goto("/ns/acme/memories/?validity=superseded")
    expect(page.locator("#table")).to_contain_text("stored in Docker Hub")
    page.goto("/ns/acme/memories/")
    expect(page.locator("#table")).not_to_contain_text("stored in Docker Hub")

    page.goto(f"/memories/{old.pk}/history/")
    page.locator("button:has-text('Re-open')").first.click()
    expect(page.locator(".messages")).to_contain_text("Re-opened")
    assert Memory.objects.get(pk=old.pk).valid_until is None


def test_create_form_takes_dates_and_what_it_replaces(page, admin_user, acme):
    old = services.memory_create(namespace=acme, content=OLD, created_at="2025-03-01").memory
    login(page, "admin")
    page.goto(f"/ns/acme/memories/new/?supersedes={old.pk}")
    page.fill("textarea[name=content]", NEW)
    page.fill("input[name=valid_from]", "2025-06-01")
    expect(page.locator("input[name=supersedes]")).to_have_value(str(old.pk))
    page.locator("form.memoryform button.primary[type=submit]").click()
    expect(page.locator(".messages")).to_contain_text("Replaces 1 older memory")
    old.refresh_from_db()
    assert old.valid_until.date().isoformat() == "2025-06-01"

    page.set_viewport_size({"width": 390, "height": 844})
    page.goto("/ns/acme/memories/new/")
    page.fill("input[name=valid_until]", "2020-01-01")
    page.fill("input[name=valid_from]", "2021-01-01")
    page.fill("textarea[name=content]", "A fact with its dates the wrong way round.")
    page.locator("form.memoryform button.primary[type=submit]").click()
    expect(page.locator(".field.has-error")).to_contain_text("valid_from")
    shoot(page, "create-validity-390")
