"""Browser tests: Playwright driving the system Chromium against the real ASGI app.

One browser per test session and one live server (tests/api/live.py's uvicorn thread, which
sees the test database). Tests that use them write with `transactional_db`, so what they seed is
committed and visible to the server. Never a browser download: the Debian `chromium` package.
"""

from __future__ import annotations

import os
import re
from contextlib import contextmanager
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
ROOT = Path(__file__).resolve().parents[2]
# Screenshots go to an ignored folder, so a test run leaves the tree clean; `make screenshots`
# points SCREENSHOTS_DIR at docs/screenshots to refresh the README's pictures.
SCREENSHOTS = ROOT / os.environ.get("SCREENSHOTS_DIR", "var/screenshots")
PHONE = {"width": 390, "height": 844}
# htmx's console note on a 4xx answer it swapped in (base.html's responseHandling).
HTMX_CLIENT_ERROR = re.compile(r"Response Status Error Code 4\d\d from ")
# Reported as a console error when the page's Content-Security-Policy refuses something.
CSP_REPORTER = """
document.addEventListener("securitypolicyviolation", (event) => {
  const what = event.blockedURI || "inline";
  console.error(`CSP violation: ${event.violatedDirective} blocked ${what}`);
});
"""
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


def open_page(browser, base_url: str, viewport: dict):
    """A fresh browser context and page that record every console error, uncaught exception
    and CSP violation (see `watched`)."""
    context = browser.new_context(base_url=base_url, viewport=viewport)
    context.set_default_timeout(15_000)
    context.add_init_script(CSP_REPORTER)
    page = context.new_page()
    page.console_errors = []  # (text, url of the resource it is about)
    page.allowed_errors = []
    # Answers a test provokes and then checks: a page with 4xx/5xx, an htmx call with 4xx
    # (the page shows its message, e.g. a refused upload).
    page.answered = set()

    def on_console(message) -> None:
        if message.type == "error":
            page.console_errors.append((message.text, message.location.get("url", "")))

    def on_response(response) -> None:
        page_answer = response.request.resource_type == "document" and response.status >= 400
        htmx_refusal = bool(response.request.headers.get("hx-request")) and (
            400 <= response.status < 500
        )
        if page_answer or htmx_refusal:
            page.answered.add(response.url)

    page.on("console", on_console)
    page.on("response", on_response)
    page.on("pageerror", lambda exc: page.console_errors.append((f"uncaught: {exc}", "")))
    return context, page


def allow_console_errors(page, *fragments: str) -> None:
    """Errors a test provokes on purpose (a 400 answer it checks): the ones containing a
    fragment do not fail it."""
    page.allowed_errors.extend(fragments)


def unexpected_errors(page) -> list[str]:
    """Console errors, less those allowed and the browser's and htmx's notes on an answer the
    test provoked (a form answered with 400, an upload refused with 413): a failed script,
    style or image, a 5xx to htmx, an uncaught exception or a CSP violation counts."""
    errors = []
    for text, url in page.console_errors:
        answered = (
            text.startswith("Failed to load resource") and url in page.answered
        ) or HTMX_CLIENT_ERROR.match(text)
        if not answered and not any(a in text for a in page.allowed_errors):
            errors.append(text)
    return errors


@contextmanager
def watched(browser, base_url: str, viewport: dict):
    """A page for one test that fails it on any console error or CSP violation the test did
    not allow: every browser test checks that the pages it visits run cleanly."""
    context, page = open_page(browser, base_url, viewport)
    try:
        yield page
        errors = unexpected_errors(page)
        assert not errors, f"console errors or CSP violations on {page.url}: {errors}"
    finally:
        context.close()


@pytest.fixture
def page(browser, asgi_server):  # noqa: F811
    with watched(browser, asgi_server, {"width": 1280, "height": 900}) as page:
        yield page


@pytest.fixture
def phone(browser, asgi_server):  # noqa: F811
    """The same at 390 px wide, a phone."""
    with watched(browser, asgi_server, PHONE) as page:
        yield page


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
    """Save a full-page screenshot (var/screenshots/NAME.png; docs/screenshots with
    `make screenshots`)."""
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
