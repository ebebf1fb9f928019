"""In a real browser: merge a near-duplicate pair (the links move to the kept memory, the merge
is in its history) and undo it from there; resolve a conflict with a note and undo that from
the memory's history; the navigation with
every queue's count stays on one line at 1280 px."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from playwright.sync_api import expect

from apps.history.selectors import revisions_for_memory
from apps.memories import services
from apps.memories.models import CausalEdge, Memory
from apps.queues.jobs import near_duplicates_update
from apps.queues.models import ConflictDecision

from .conftest import login, shoot

pytestmark = pytest.mark.django_db(transaction=True)

LEFT = "Deploys to production happen on Tuesday afternoons after the release checklist is done."
RIGHT = "Production deploys happen on Tuesday afternoons once the release checklist is done."


@pytest.fixture
def pair(acme):
    left = services.memory_create(namespace=acme, content=LEFT, tags=["deploy"]).memory
    right = services.memory_create(namespace=acme, content=RIGHT, tags=["release"]).memory
    checklist = services.memory_create(
        namespace=acme, title="Release checklist", content="Changelog, migrations, smoke test."
    ).memory
    first, second = sorted([left, right], key=lambda m: str(m.pk))
    # The memory merged away (the right one on the page) has the link that must move.
    services.edge_create(source=second, target=checklist, relation="depends_on")
    near_duplicates_update(acme)
    return first, second, checklist


def test_merge_a_near_duplicate_pair_then_undo_it_from_history(page, admin_user, acme, pair):
    cache.clear()
    first, second, checklist = pair
    login(page, "admin")
    page.goto("/ns/acme/queues/duplicates/")
    expect(page.locator("#nav-duplicates-count")).to_have_text("1")
    card = page.locator("section.duppair")
    expect(card).to_have_count(1)
    expect(card.locator(".side").first).to_contain_text(first.content[:20])
    expect(card.locator("ins").first).to_be_visible()  # the word diff
    shoot(page, "queue-duplicates")

    card.locator("button:has-text('Merge, keep left')").click()
    expect(page.locator(".messages")).to_contain_text("Merged")
    expect(page).to_have_url(f"/memories/{first.pk}/")
    # The other memory's link now starts at the kept one, next to the supersedes link.
    links = page.locator("#links")
    expect(links).to_contain_text("Release checklist")
    expect(links).to_contain_text("supersedes")
    assert CausalEdge.objects.filter(source=first, target=checklist).exists()
    second.refresh_from_db()
    assert second.archived

    page.goto(f"/memories/{first.pk}/history/")
    merge = page.locator("li.revision").first
    expect(merge).to_contain_text("merge")
    expect(merge).to_contain_text("1 link moved to this memory")
    shoot(page, "history-merge")
    merge.locator("button:has-text('Undo this merge')").click()
    expect(page.locator(".messages")).to_contain_text("Merge undone")
    second.refresh_from_db()
    assert not second.archived
    assert CausalEdge.objects.filter(source=second, target=checklist).exists()
    assert not CausalEdge.objects.filter(source=first, target=checklist).exists()
    assert revisions_for_memory(first).first().action == "restore"
    # The pair is back in the queue for another decision.
    page.goto("/ns/acme/queues/duplicates/")
    expect(page.locator("section.duppair")).to_have_count(1)


def test_resolve_a_conflict_with_a_note(page, admin_user, acme):
    cache.clear()
    redis = Memory.objects.get(namespace=acme, title="Use Redis for the session cache")
    login(page, "admin")
    page.goto("/ns/acme/queues/conflicts/")
    expect(page.locator("#nav-conflicts-count")).to_have_text("1")
    card = page.locator("section.conflict")
    expect(card).to_have_count(1)
    expect(card).to_contain_text("linked as contradicting")
    shoot(page, "queue-conflicts")
    card.locator("input[name=note]").fill("Redis was replaced by Postgres after the outage.")
    card.locator("button:has-text('Mark resolved')").click()
    expect(page.locator(".messages")).to_contain_text("Marked resolved")
    expect(page.locator("section.conflict")).to_have_count(0)
    expect(page.locator("#nav-conflicts-count")).to_have_text("0")
    decision = ConflictDecision.objects.get()
    assert decision.note.startswith("Redis was replaced") and decision.decided_by == "admin"
    assert redis.pk in (decision.first_id, decision.second_id)
    # The decision is in the memory's history with the note; undoing it reopens the conflict.
    page.goto(f"/memories/{redis.pk}/history/")
    entry = page.locator("li.revision").first
    expect(entry).to_contain_text("marked resolved (note: Redis was replaced")
    shoot(page, "history-decision")
    entry.locator("button:has-text('Undo this decision')").click()
    expect(page.locator(".messages")).to_contain_text("Decision undone")
    assert not ConflictDecision.objects.exists()
    page.goto("/ns/acme/queues/conflicts/")
    expect(page.locator("section.conflict")).to_have_count(1)
    expect(page.locator("#nav-conflicts-count")).to_have_text("1")


def test_navigation_stays_on_one_line_at_1280_px(page, admin_user, acme):
    cache.clear()
    login(page, "admin")
    page.goto("/ns/acme/memories/")
    assert page.viewport_size["width"] == 1280
    items = page.locator(".topbar .mainnav > a, .topbar .mainnav > details > summary")
    tops = {round(box["y"]) for box in (items.nth(i).bounding_box() for i in range(items.count()))}
    assert len(tops) == 1, f"navigation wraps onto {len(tops)} lines"
    bar = page.locator(".topbar").bounding_box()
    assert bar["height"] < 60
    # An owner's full bar (Members, Connect, namespace switch) needs no sideways scroll.
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    page.locator(".navmenu summary").click()
    expect(page.locator(".navmenu .menu")).to_contain_text("Near-duplicates")
    expect(page.locator(".navmenu .menu")).to_contain_text("Missed searches")
