"""In a real browser: an edit form left open while someone else saves the memory does not put
the older values back; the page shows their text beside yours, and a second save is deliberate."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from apps.memories import services
from apps.memories.models import Memory

from .conftest import login, shoot

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_stale_edit_form_shows_both_versions_and_writes_nothing(page, admin_user, acme):
    memory = Memory.objects.filter(namespace=acme, title="Use Redis for the session cache").get()
    login(page, "admin")
    page.goto(f"/memories/{memory.pk}/edit/")
    # Meanwhile an assistant corrects the text.
    services.memory_update(memory=memory, content="Sessions moved to Postgres in March.")
    page.fill("input[name=title]", "Session cache")
    page.click("button:has-text('Save')")

    banner = page.locator(".banner.conflict")
    expect(banner).to_contain_text("Someone else changed this memory")
    expect(banner.locator("tr", has_text="Content")).to_contain_text(
        "Sessions moved to Postgres in March."
    )
    expect(banner.locator("tr", has_text="Title")).to_contain_text("Session cache")
    page.set_viewport_size({"width": 390, "height": 900})
    shoot(page, "edit-conflict-390")
    stored = Memory.objects.get(pk=memory.pk)
    assert stored.content == "Sessions moved to Postgres in March."
    assert stored.title == "Use Redis for the session cache"

    # Saving again, now knowingly over the newer version, stores the form as it stands.
    page.click("button:has-text('Save')")
    expect(page.locator(".messages")).to_contain_text("Saved:")
    stored = Memory.objects.get(pk=memory.pk)
    assert stored.title == "Session cache"
    assert stored.content != "Sessions moved to Postgres in March."  # the form's text won
