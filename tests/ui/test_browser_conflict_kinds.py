"""In a real browser: a rule and a note that negates it wait in the conflicts queue as a
contradiction, with no supersede offered; keeping the note over the constitutional rule is
refused until the confirmation box is ticked; a real update beside it keeps its supersede."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from playwright.sync_api import expect

from apps.memories import services
from apps.memories.models import Memory
from apps.queues.models import ConflictDecision

from .conftest import login, shoot

pytestmark = pytest.mark.django_db(transaction=True)

RULE = "Never commit API tokens to the repository."
AGAINST = "Commit the API tokens to the repository."


def test_a_negation_pair_is_a_contradiction_and_the_rule_needs_a_confirmation(
    page, admin_user, acme
):
    cache.clear()
    rule = services.memory_create(namespace=acme, content=RULE, tier="constitutional").memory
    against = services.memory_create(namespace=acme, content=AGAINST).memory
    services.memory_create(namespace=acme, content="Our CI runs on Jenkins.")
    services.memory_create(namespace=acme, content="We moved CI from Jenkins to GitHub Actions.")
    login(page, "admin")

    page.goto("/ns/acme/queues/conflicts/")
    card = page.locator("section.conflict", has_text="Never commit API tokens")
    expect(card).to_have_count(1)
    expect(card.locator(".pairhead").first).to_contain_text("contradiction")
    expect(card.locator("button:has-text('Supersede')")).to_have_count(0)
    update = page.locator("section.conflict", has_text="runs on Jenkins")
    expect(update.locator("button:has-text('Supersede')")).to_have_count(1)
    expect(update).not_to_contain_text("constitutional rule")
    shoot(page, "queue-contradiction")

    # Keeping the note would archive the rule: refused without the box, nothing decided.
    card.locator(f"button[value='keep:{against.pk}']").click()
    expect(page.locator(".messages")).to_contain_text("constitutional")
    assert not Memory.objects.get(pk=rule.pk).archived
    assert not ConflictDecision.objects.exists()

    card = page.locator("section.conflict", has_text="Never commit API tokens")
    card.locator("input[name=note]").fill("The rule holds; the note was a mistake.")
    card.locator("button:has-text('Mark resolved')").click()
    expect(page.locator(".messages")).to_contain_text("Marked resolved")
    expect(page.locator("section.conflict", has_text="Never commit API tokens")).to_have_count(0)
    assert ConflictDecision.objects.get().note == "The rule holds; the note was a mistake."


def test_a_ticked_confirmation_lets_a_person_replace_the_rule(page, admin_user, acme):
    cache.clear()
    rule = services.memory_create(namespace=acme, content=RULE, tier="constitutional").memory
    against = services.memory_create(namespace=acme, content=AGAINST).memory
    login(page, "admin")
    page.goto("/ns/acme/queues/conflicts/")
    card = page.locator("section.conflict", has_text="Never commit API tokens")
    card.locator("input[name=confirm_constitutional]").check()
    card.locator(f"button[value='keep:{against.pk}']").click()
    expect(page.locator(".messages")).to_contain_text("Kept one")
    assert Memory.objects.get(pk=rule.pk).archived
