"""A newcomer's first week in the browser: write a memory and its update, read the warning in
words and supersede from it, read the history without ids or ISO timestamps, connect an app
with one namespace; the navigation on one line at 1280 px; search as of an hour of a day."""

from __future__ import annotations

import re
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from django.core.cache import cache
from django.utils import timezone
from playwright.sync_api import expect

from apps.access.models import NamespaceMembership, Role
from apps.memories import services
from apps.memories.models import Memory
from apps.queues.models import ConflictDecision
from tests.oauth.dance import CALLBACK, authorize_url, exchange, pkce, register

from .conftest import PASSWORD, PHONE, login, make_user, shoot, watched

pytestmark = pytest.mark.django_db(transaction=True)

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)
ISO_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}")
OLD = "Our CI runs on Jenkins."
NEW = "We moved CI from Jenkins to GitHub Actions."


@pytest.fixture
def team(transactional_db, embedding_model, admin_user):
    namespace = services.namespace_get_or_create(name="team")
    NamespaceMembership.objects.create(user=admin_user, namespace=namespace, role=Role.OWNER)
    cache.clear()
    return namespace


def _create(page, content: str, title: str = "") -> None:
    page.goto("/ns/team/memories/new/")
    page.fill("textarea[name=content]", content)
    if title:
        page.fill("input[name=title]", title)
    page.locator("form.memoryform button.primary[type=submit]").click()
    expect(page.locator(".messages")).to_contain_text("Memory created.")


def _visible_text_has_no_machine_values(page) -> None:
    text = page.inner_text("body")
    assert not UUID.search(text), f"an id on {page.url}: {UUID.search(text).group(0)}"
    assert not ISO_TIME.search(text), f"an ISO time on {page.url}: {ISO_TIME.search(text)[0]}"


def test_the_newcomers_path(page, browser, asgi_server, team):
    login(page, "admin")
    _create(page, OLD, title="CI runs on Jenkins")
    old = Memory.objects.get(namespace=team, title="CI runs on Jenkins")
    _create(page, NEW)
    new = Memory.objects.get(namespace=team, content=NEW)

    # The update warning: the older memory linked, the reasons in a sentence, a way to the
    # pair in the queue, and Supersede in place.
    warning = page.locator(".noticed")
    expect(warning).to_have_count(1)
    expect(warning).to_contain_text("This looks like an update of “CI runs on Jenkins”")
    expect(warning).to_contain_text("It names the same subjects (CI, Jenkins) and says it moved.")
    expect(warning).not_to_contain_text("similar meaning")
    expect(warning.locator(f"a[href='/memories/{old.pk}/']")).to_have_count(1)
    queue_link = warning.locator("a:has-text('See the pair in the conflicts queue')")
    assert "/ns/team/queues/conflicts/#conflict-" in queue_link.get_attribute("href")
    shoot(page, "update-warning")
    page.set_viewport_size(PHONE)
    shoot(page, "update-warning-phone")
    page.set_viewport_size({"width": 1280, "height": 900})

    queue_link.click()
    pair = page.locator("section.conflict")
    expect(pair).to_have_count(1)
    expect(pair).to_contain_text("It names the same subjects (CI, Jenkins) and says it moved.")
    page.go_back()

    page.locator(".noticed button:has-text('Supersede')").click()
    expect(page.locator(".messages")).to_contain_text("Superseded")
    assert page.url.endswith(f"/memories/{new.pk}/")  # back where the warning was
    expect(page.locator(".noticed")).to_have_count(0)
    old.refresh_from_db()
    assert old.valid_until is not None
    assert ConflictDecision.objects.filter(status="superseded").count() == 1

    # The older memory's history, in words: who replaced it, when, and one way back.
    page.goto(f"/memories/{old.pk}/history/")
    _visible_text_has_no_machine_values(page)
    superseded = page.locator("li.revision:has(.rev-supersede)")
    expect(superseded.locator("[data-field=superseded_by] + span a")).to_have_text(
        re.compile("We moved CI from Jenkins")
    )
    expect(superseded.locator("button")).to_have_count(0)
    expect(superseded).to_contain_text("undone with the queue decision above")
    decision = page.locator("li.revision:has(.rev-decision)")
    expect(decision.locator("button")).to_have_text(["Undo this decision (re-open this memory)"])
    shoot(page, "history-superseded")
    page.set_viewport_size(PHONE)
    shoot(page, "history-superseded-phone")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"/memories/{new.pk}/history/")
    _visible_text_has_no_machine_values(page)

    # Connecting an app as a person whose only namespace is this one: it comes checked.
    person = make_user("newcomer")
    NamespaceMembership.objects.create(user=person, namespace=team, role=Role.EDITOR)
    client_id = register(asgi_server, name="Cursor")
    verifier, challenge = pkce()
    with watched(browser, asgi_server, {"width": 1280, "height": 900}) as app_page:
        callbacks: list[str] = []

        def app_callback(route):
            callbacks.append(route.request.url)
            route.fulfill(status=200, content_type="text/html", body="<p>Connected.</p>")

        app_page.route(f"{CALLBACK}**", app_callback)
        app_page.goto(authorize_url(asgi_server, client_id, challenge))
        app_page.fill("input[name=username]", "newcomer")
        app_page.fill("input[name=password]", PASSWORD)
        app_page.click("button[type=submit]")
        app_page.wait_for_url("**/oauth/authorize**")
        expect(app_page.locator(f"input[name=namespaces][value='{team.pk}']")).to_be_checked()
        shoot(app_page, "oauth-consent-one-namespace")
        app_page.click("button[name=allow]")
        app_page.wait_for_url(f"{CALLBACK}**")
    code = parse_qs(urlsplit(callbacks[0]).query)["code"][0]
    assert exchange(asgi_server, client_id, code, verifier).status_code == 200


def test_supersession_made_at_write_time_has_one_undo(page, team):
    old = services.memory_create(namespace=team, content=OLD).memory
    services.memory_create(namespace=team, content=NEW, supersedes=[str(old.pk)])
    login(page, "admin")
    page.goto(f"/memories/{old.pk}/history/")
    _visible_text_has_no_machine_values(page)
    superseded = page.locator("li.revision:has(.rev-supersede)")
    expect(superseded.locator("button")).to_have_text(
        ["Re-open this memory (undo the supersession)"]
    )
    expect(superseded.locator(".change:has([data-field=valid_until]) ins")).to_have_text(
        re.compile(r"^\d{1,2} \w{3} \d{4}, \d{2}:\d{2}$")
    )
    superseded.locator("button").click()
    expect(page.locator(".messages")).to_contain_text("Re-opened")
    old.refresh_from_db()
    assert old.valid_until is None


def test_consent_keeps_the_choices_after_an_error(page, asgi_server, team):
    person = make_user("two-spaces")
    other = services.namespace_get_or_create(name="team-two")
    for namespace in (team, other):
        NamespaceMembership.objects.create(user=person, namespace=namespace, role=Role.EDITOR)
    client_id = register(asgi_server, name="VS Code")
    _, challenge = pkce()
    page.goto(authorize_url(asgi_server, client_id, challenge))
    page.fill("input[name=username]", "two-spaces")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url("**/oauth/authorize**")
    boxes = page.locator("input[name=namespaces]")
    expect(boxes).to_have_count(2)
    for i in range(2):
        expect(boxes.nth(i)).not_to_be_checked()  # two namespaces: the person chooses
    page.check("input[name=access][value=write]")
    page.click("button[name=allow]")
    expect(page.locator("#consent .error")).to_contain_text("Choose at least one namespace.")
    expect(page.locator("input[name=access][value=write]")).to_be_checked()
    page.check(f"input[name=namespaces][value='{other.pk}']")
    page.click("button[name=allow]")
    expect(page.locator("#consent .error")).to_have_count(0)


def test_navigation_fits_one_line_at_1280(page, phone, admin_user, team):
    # After `make demo`: the demo namespace beside the default one (the switch is as wide as
    # the longest name), the admin its owner (Members, Connect), a three-digit queue badge.
    for name in ("default", "demo"):
        namespace = services.namespace_get_or_create(name=name)
        NamespaceMembership.objects.create(user=admin_user, namespace=namespace, role=Role.OWNER)
    counts = {"duplicates": 12, "conflicts": 300, "stale": 9, "missed": 6, "total": 327}
    login(page, "admin")
    for where in ("/ns/demo/memories/", "/?namespace=demo", "/ns/demo/queues/stale/"):
        cache.set("ui:queue-counts:demo", counts, 600)
        page.goto(where)
        expect(page.locator("#nav-queues-count")).to_have_text("327")
        brand = page.locator(".topbar .brand").bounding_box()
        user = page.locator("details.usermenu summary").bounding_box()
        middle = lambda box: box["y"] + box["height"] / 2  # noqa: E731
        assert abs(middle(user) - middle(brand)) < 4, f"the user name wrapped on {where}"
        assert page.locator(".topbar").bounding_box()["height"] < 60
    shoot(page, "navigation-1280")

    cache.set("ui:queue-counts:demo", counts, 600)
    login(phone, "admin")
    phone.goto("/ns/demo/memories/")
    width, inner = phone.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width <= inner
    phone.click("button[data-nav-toggle]")
    expect(phone.locator("details.usermenu summary")).to_be_visible()
    shoot(phone, "navigation-phone")


def test_search_as_of_a_time_of_day(page, team):
    now = timezone.now().replace(second=0, microsecond=0)
    old = services.memory_create(
        namespace=team, content=OLD, created_at=(now - timedelta(hours=5)).isoformat()
    ).memory
    services.memory_create(
        namespace=team,
        content=NEW,
        created_at=(now - timedelta(minutes=30)).isoformat(),
        supersedes=[str(old.pk)],
    )
    login(page, "admin")
    page.goto("/?namespace=team&q=Where+does+CI+run%3F")
    results = page.locator("ol.results li.result")
    expect(results.first).to_contain_text("GitHub Actions")
    page.locator("details.filters summary").click()
    an_hour_ago = timezone.localtime(now - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M")
    page.fill("input[name=as_of]", an_hour_ago)
    page.locator("form.searchform button[type=submit]").click()
    expect(results.first).to_contain_text("runs on Jenkins")
    expect(page.locator("ol.results")).not_to_contain_text("GitHub Actions")
    expect(page.locator("input[name=as_of]")).to_have_value(an_hour_ago)
    shoot(page, "search-as-of-time")


def test_the_warning_asks_before_replacing_a_rule_and_never_supersedes_a_negation(page, team):
    rule = services.memory_create(namespace=team, content=OLD, tier="constitutional").memory
    update = services.memory_create(namespace=team, content=NEW).memory
    never = services.memory_create(
        namespace=team, content="Never commit API tokens to the repository."
    ).memory
    negation = services.memory_create(
        namespace=team, content="Commit the API tokens to the repository."
    ).memory
    login(page, "admin")

    page.goto(f"/memories/{update.pk}/")
    warning = page.locator(".noticed")
    expect(warning.locator("input[name=confirm_constitutional]")).to_have_count(1)
    warning.locator("button:has-text('Supersede')").click()
    expect(page.locator(".messages")).to_contain_text("constitutional")
    assert page.url.endswith(f"/memories/{update.pk}/")
    rule.refresh_from_db()
    assert rule.valid_until is None
    page.locator(".noticed input[name=confirm_constitutional]").check()
    page.locator(".noticed button:has-text('Supersede')").click()
    expect(page.locator(".messages")).to_contain_text("Superseded")
    rule.refresh_from_db()
    assert rule.valid_until is not None

    page.goto(f"/memories/{negation.pk}/")
    warning = page.locator(".noticed")
    expect(warning).to_contain_text(f"This says the opposite of “{never.display_title}”")
    expect(warning).to_contain_text("one of the two negates the other")
    expect(warning.locator("button")).to_have_count(0)
    expect(
        warning.locator("a:has-text('Decide which holds in the conflicts queue')")
    ).to_have_count(1)
