"""The web UI under a path prefix behind nginx, in a browser (tests/core/prefixed.py): every
request a page makes (its styles, scripts, htmx calls, the graph's data) stays under /memory/,
and the pages run without a console error or CSP violation."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from apps.access.models import Role
from apps.access.services import membership_set
from tests.core.prefixed import PASSWORD, PREFIX, make_person, prefixed  # noqa: F401

from .conftest import seed_namespace, watched


def test_a_person_searches_browses_and_opens_the_graph_under_the_prefix(
    browser,
    prefixed,  # noqa: F811
    transactional_db,
    embedding_model,
):
    acme = seed_namespace("acme")
    membership_set(namespace=acme, user=make_person("grace"), role=Role.EDITOR)
    requested: list[str] = []
    with watched(browser, prefixed.public + "/", {"width": 1280, "height": 900}) as page:
        page.on("request", lambda request: requested.append(request.url))
        page.goto(f"{prefixed.public}/")
        expect(page).to_have_url(re.compile(rf"{PREFIX}/login/\?next={PREFIX}/$"))
        page.fill("input[name=username]", "grace")
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_url(f"{prefixed.public}/")

        page.goto(f"{prefixed.public}/?namespace=acme")
        page.fill("input[name=q]", "where do sessions live, redis or postgres?")
        page.click(".querybar button[type=submit]")
        expect(page.locator("#results")).to_contain_text("Use Redis for the session cache")
        page.click("text=Explain ranking")
        expect(page.locator("h1")).to_have_text("Why these results ranked")

        page.goto(f"{prefixed.public}/ns/acme/memories/")
        page.locator("a", has_text="Use Redis for the session cache").first.click()
        expect(page.locator("h1")).to_contain_text("Use Redis for the session cache")

        with page.expect_response(re.compile(rf"{PREFIX}/ns/acme/graph/data/")) as graph:
            page.goto(f"{prefixed.public}/ns/acme/graph/")
        assert graph.value.status == 200
        page.wait_for_load_state("networkidle")

    outside = [url for url in requested if not url.startswith(prefixed.public + "/")]
    assert not outside, outside
    assert any(f"{PREFIX}/static/ui/app.css" in url for url in requested)
