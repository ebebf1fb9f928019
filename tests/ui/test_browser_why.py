"""In a real browser: a why-question shows its causal chain above the results and in the
explain view; a question with no link shows none."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from playwright.sync_api import expect

from apps.ui.demo import CHAIN_DECISION, CHAIN_INCIDENT, CHAIN_QUESTION, seed_decision_chain

from .conftest import login, shoot

pytestmark = pytest.mark.django_db(transaction=True)


def test_why_question_shows_the_chain_in_results_and_explain(page, admin_user, acme):
    incident, decision = seed_decision_chain(acme)
    login(page, "admin")
    page.goto("/?namespace=acme")
    page.fill("input[name=q]", CHAIN_QUESTION)
    page.click(".querybar button[type=submit]")
    chain = page.locator("#causal-chain")
    expect(chain).to_be_visible()
    steps = chain.locator("ol.chain li")
    expect(steps.nth(0)).to_have_text(CHAIN_DECISION["title"])
    expect(steps.nth(1)).to_contain_text("caused by")
    expect(steps.nth(1).locator("a")).to_have_text(CHAIN_INCIDENT["title"])
    # The decision and the incident that caused it lead the results.
    results = page.locator("li.result")
    expect(results.nth(0)).to_have_attribute("data-id", str(decision.pk))
    expect(results.nth(1)).to_have_attribute("data-id", str(incident.pk))
    shoot(page, "search-why")

    page.click("text=Explain ranking")
    expect(page.locator("h1")).to_have_text("Why these results ranked")
    expect(page.locator("#causal-chain")).to_contain_text(CHAIN_INCIDENT["title"])

    # Each step links to its memory.
    page.locator("#causal-chain a", has_text=CHAIN_INCIDENT["title"]).click()
    expect(page.locator("main")).to_contain_text("daytime bulk import held locks")


def test_no_link_no_chain(page, admin_user, acme):
    login(page, "admin")
    query = urlencode({"namespace": "acme", "q": "Why are embeddings normalised?"})
    page.goto(f"/?{query}")
    expect(page.locator("li.result").first).to_be_visible()
    expect(page.locator("#causal-chain")).to_have_count(0)
    page.goto(f"/explain/?{query}")
    expect(page.locator("#no-chain")).to_contain_text("no causal link")
