"""In a real browser: the graph page draws the namespace's linked memories (and a memory's
neighbourhood), an editor links two memories by dragging one onto the other (a revision), and
every analytics chart draws data from real searches, feedback and job runs."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from apps.access.models import NamespaceMembership, Role
from apps.history.models import MemoryRevision
from apps.jobs.models import Job
from apps.jobs.services import job_execute
from apps.memories.models import CausalEdge, Memory
from apps.search import querylog
from apps.search.feedback import feedback_record
from apps.search.services import search

from .conftest import login, make_user, shoot

pytestmark = pytest.mark.django_db(transaction=True)

REDIS = "Use Redis for the session cache"
CACHE = "Cache invalidation on write"
POSTGRES = "Sessions live in Postgres now"


def _csp_errors(page) -> list[str]:
    errors: list[str] = []
    page.on(
        "console",
        lambda m: errors.append(m.text) if "Content Security Policy" in m.text else None,
    )
    return errors


def _linked(namespace) -> tuple[int, int]:
    """How many memories have a link, and how many links (the handbook's chunks are linked)."""
    edges = CausalEdge.objects.filter(namespace=namespace)
    ends = set(edges.values_list("source_id", flat=True)) | set(
        edges.values_list("target_id", flat=True)
    )
    return len(ends), edges.count()


def _nodes(page) -> dict[str, dict]:
    """Node id -> label and its position on the page (from Cytoscape's own data)."""
    return page.evaluate(
        """() => {
            const box = document.getElementById('graph').getBoundingClientRect();
            const out = {};
            document.getElementById('graph').cy.nodes().forEach((n) => {
                const p = n.renderedPosition();
                out[n.id()] = { label: n.data('label'), x: box.x + p.x, y: box.y + p.y,
                                inside: p.x > 0 && p.y > 0 && p.x < box.width && p.y < box.height };
            });
            return out;
        }"""
    )


def test_graph_page_draws_the_linked_memories(page, admin_user, acme):
    csp = _csp_errors(page)
    login(page, "admin")
    page.goto("/ns/acme/graph/")
    graph = page.locator("#graph[data-ready]")
    linked, links = _linked(acme)
    assert linked >= 3
    expect(graph).to_have_attribute("data-nodes", str(linked))  # every linked memory
    expect(graph).to_have_attribute("data-edges", str(links))
    nodes = _nodes(page)
    titles = {m.title: str(m.pk) for m in Memory.objects.filter(namespace=acme) if m.title}
    assert {titles[REDIS], titles[CACHE], titles[POSTGRES]} <= set(nodes)
    assert len(nodes) == linked
    assert all(node["inside"] for node in nodes.values())  # drawn in the visible canvas
    expect(page.locator("#graph-status")).to_contain_text(f"{linked} memories, {links} links")
    expect(page.locator("#graph-link")).to_have_count(1)  # admin may link
    shoot(page, "graph")

    # With the unlinked memories: every active memory of the namespace.
    page.check("input[name=unlinked]")
    active = Memory.objects.filter(namespace=acme, archived=False).count()
    expect(page.locator("#graph[data-ready]")).to_have_attribute("data-nodes", str(active))

    # A tap on a node opens that memory.
    page.goto(f"/ns/acme/graph/?memory={titles[REDIS]}&depth=1")
    expect(page.locator("#graph[data-ready]")).to_have_attribute("data-nodes", "3")
    node = _nodes(page)[titles[CACHE]]
    page.mouse.click(node["x"], node["y"])
    page.wait_for_url(f"**/memories/{titles[CACHE]}/")
    assert csp == []


def test_editor_drags_one_memory_onto_another_to_link_them(page, acme):
    editor = make_user("eddie")
    NamespaceMembership.objects.create(user=editor, namespace=acme, role=Role.EDITOR)
    login(page, "eddie")
    page.goto("/ns/acme/graph/")
    linked, links = _linked(acme)
    expect(page.locator("#graph[data-ready]")).to_have_attribute("data-nodes", str(linked))
    cache = Memory.objects.get(namespace=acme, title=CACHE)
    postgres = Memory.objects.get(namespace=acme, title=POSTGRES)
    nodes = _nodes(page)
    start, end = nodes[str(cache.pk)], nodes[str(postgres.pk)]
    page.mouse.move(start["x"], start["y"])
    page.mouse.down()
    page.mouse.move((start["x"] + end["x"]) / 2, (start["y"] + end["y"]) / 2, steps=8)
    page.mouse.move(end["x"], end["y"], steps=8)
    page.mouse.up()
    form = page.locator("#graph-link")
    expect(form).to_be_visible()
    expect(form).to_contain_text(f"{CACHE} → {POSTGRES}")
    form.locator("select[name=relation]").select_option("caused")
    form.locator("button:has-text('Link')").click()
    expect(page.locator("#graph-status")).to_contain_text("Linked (caused)")
    expect(page.locator("#graph")).to_have_attribute("data-edges", str(links + 1))
    edge = CausalEdge.objects.get(source=cache, target=postgres, relation="caused")
    revision = MemoryRevision.objects.filter(memory_id=cache.pk, action="link").latest("id")
    assert revision.door == "ui" and revision.actor_user == editor
    assert revision.after["edge"]["relation"] == edge.relation
    # Drawn after a reload too: it is in the database, not only on the canvas.
    page.reload()
    expect(page.locator("#graph[data-ready]")).to_have_attribute("data-edges", str(links + 1))


def test_viewer_sees_the_graph_without_drag_link(page, acme):
    viewer = make_user("vera")
    NamespaceMembership.objects.create(user=viewer, namespace=acme, role=Role.VIEWER)
    login(page, "vera")
    page.goto("/ns/acme/graph/")
    linked, _ = _linked(acme)
    expect(page.locator("#graph[data-ready]")).to_have_attribute("data-nodes", str(linked))
    assert page.get_attribute("#graph", "data-link-url") is None
    expect(page.locator("#graph-link")).to_have_count(0)
    expect(page.locator("main")).not_to_contain_text("Drag a node")


def _searches(namespace) -> None:
    """Real searches through the search service, feedback on some, and two job runs."""
    asked = [
        "where are sessions stored",
        "where are sessions stored",
        "session cache ttl",
        "are embeddings normalised",
        "when can migrations run",
        "zebra migration patterns of the serengeti",
    ]
    for text in asked:
        response = search(namespace=namespace, query=text, limit=5)
        querylog.flush()
        if response.memories:
            first = response.memories[0]["id"]
            feedback_record(
                query_log_id=response.query_log_id,
                namespace=namespace,
                result_feedback={first: "sessions" in text},
            )
    job_execute(Job.PAGERANK, namespace_id=namespace.pk, trigger="command")


def test_every_analytics_chart_draws_data(page, admin_user, acme, settings):
    settings.SEARCH_QUERYLOG_SYNC = True
    _searches(acme)
    csp = _csp_errors(page)
    login(page, "admin")
    page.goto("/ns/acme/analytics/")
    charts = page.locator("canvas[data-chart]")
    expect(charts).to_have_count(6)
    names = charts.evaluate_all("cs => cs.map(c => c.dataset.chart)")
    assert names == ["searches", "rates", "strategies", "queries", "memories", "growth"]
    for name in names:
        canvas = page.locator(f"canvas[data-chart={name}]")
        points = int(canvas.get_attribute("data-points") or 0)
        assert points > 0, name
        # Something is painted: the canvas has non-transparent pixels.
        painted = canvas.evaluate(
            """(c) => {
                const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
                let n = 0;
                for (let i = 3; i < d.length; i += 4) if (d[i]) n++;
                return n;
            }"""
        )
        assert painted > 500, name
    # The tables beside the charts show the same figures.
    expect(page.locator("#section-queries tbody tr").first).to_contain_text(
        "where are sessions stored"
    )
    expect(page.locator("#section-queries tbody tr").first).to_contain_text("2")
    expect(page.locator("#section-strategies tbody")).to_contain_text("semantic")
    expect(page.locator("#section-jobs tbody")).to_contain_text("pagerank")
    expect(page.locator("#section-growth tbody")).to_contain_text("decision")
    shoot(page, "analytics")
    page.select_option("select[name=days]", "7")
    page.wait_for_url("**/analytics/?days=7")
    expect(page.locator("select[name=days]")).to_have_value("7")
    assert int(page.get_attribute("canvas[data-chart=searches]", "data-points") or 0) > 0
    assert csp == []
