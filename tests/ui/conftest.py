"""Browser tests: Playwright driving the system Chromium against the real ASGI app.

One browser per test session and one live server (tests/api/live.py's uvicorn thread, which
sees the test database). Tests that use them write with `transactional_db`, so what they seed is
committed and visible to the server. Never a browser download: the Debian `chromium` package.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from apps.memories import services
from apps.memories.models import Namespace
from apps.ui.demo import PROJECT_MEMORIES, long_document
from tests.api.live import asgi_server  # noqa: F401  (the shared live-server fixture)

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
PASSWORD = "correct-horse-battery"

# Playwright's sync API keeps an event loop in this thread; the tests' own ORM calls are
# ordinary synchronous code between browser steps.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


# Package scope: one browser for all of tests/ui, closed when they are done. Playwright's sync
# API runs an event loop in this thread while it is open, which would break later tests that
# start their own (anyio.run in the MCP tests).
@pytest.fixture(scope="package")
def browser():
    if not CHROMIUM.exists():
        pytest.fail("Chromium is missing: apt-get install chromium chromium-driver")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, asgi_server):  # noqa: F811
    context = browser.new_context(base_url=asgi_server, viewport={"width": 1280, "height": 900})
    context.set_default_timeout(15_000)
    page = context.new_page()
    yield page
    context.close()


def make_user(username: str, *, superuser: bool = False):
    users = get_user_model().objects
    if superuser:
        return users.create_superuser(username=username, email="", password=PASSWORD)
    return users.create_user(username=username, password=PASSWORD)


def login(page, username: str) -> None:
    page.goto("/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url("**/")


def shoot(page, name: str) -> None:
    """Save a full-page screenshot for the README (docs/screenshots/NAME.png)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def seed_namespace(name: str = "acme") -> Namespace:
    """A small project namespace through the real write path."""
    namespace = services.namespace_get_or_create(name=name)
    created = {}
    for item in PROJECT_MEMORIES:
        created[item["title"]] = services.memory_create(namespace=namespace, **item).memory
    services.memory_create(
        namespace=namespace,
        title="Operations handbook",
        content=long_document(),
        category="pattern",
        file_path="docs/handbook.md",
        tags=["ops"],
    )
    services.edge_create(
        source=created["Cache invalidation on write"],
        target=created["Use Redis for the session cache"],
        relation="depends_on",
    )
    services.edge_create(
        source=created["Sessions live in Postgres now"],
        target=created["Use Redis for the session cache"],
        relation="contradicts",
    )
    return namespace


@pytest.fixture
def acme(transactional_db, embedding_model) -> Namespace:
    return seed_namespace("acme")


@pytest.fixture
def admin_user(transactional_db):
    return make_user("admin", superuser=True)
