"""The Connect page's "Recall at session start" block in a browser: the Claude Code settings
copy as valid JSON whose hook reads the token from the environment (even right after a token
was created, when the other snippets hold it), and the long command stays inside a phone's
width."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from .conftest import login

pytestmark = pytest.mark.django_db(transaction=True)

COPY_HOOK = "button[data-copy=\"pre[data-client='claude-code-session-start']\"]"


def test_the_session_start_hook_copies_without_the_token(page, admin_user, acme):
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    login(page, "admin")
    page.goto("/ns/acme/connect/")
    page.fill("input[name=name]", "laptop")
    page.click("button:has-text('Create token')")
    raw = page.locator("#new-token").inner_text().strip()
    expect(page.locator("#session-start")).to_contain_text("Recall at session start")

    page.click(COPY_HOOK)

    settings = json.loads(page.evaluate("navigator.clipboard.readText()"))
    (hook,) = settings["hooks"]["SessionStart"][0]["hooks"]
    assert "$MEMORYHUB_TOKEN" in hook["command"] and raw not in hook["command"]
    assert "namespace=acme" in hook["command"]
    assert page.url.split("/ns/")[0] + "/api/v1/search/" in hook["command"]
    rule = page.locator("pre[data-client='cursor-rule']").inner_text()
    assert 'namespace "acme"' in rule and raw not in rule


def test_the_session_start_block_fits_a_phone(phone, admin_user, acme):
    login(phone, "admin")
    phone.goto("/ns/acme/connect/#session-start")
    expect(phone.locator("#session-start pre").first).to_be_visible()
    width, inner = phone.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width <= inner
