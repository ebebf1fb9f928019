"""The figures behind the analytics and graph pages, checked against rows whose answers are
known: latency percentiles, gap and zero-result rates, strategy usefulness, top queries and
memories, growth by category, last job runs, and the PageRank sampling of a large graph."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from apps.jobs.models import JobRun, RunStatus
from apps.jobs.selectors import latest_runs
from apps.memories import services
from apps.memories.graph import namespace_graph, neighbourhood
from apps.memories.models import CausalEdge, Memory
from apps.memories.selectors import growth_by_category
from apps.search import analytics
from apps.search.models import QueryLog

from .conftest import PASSWORD, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def ns(db):
    return services.namespace_get_or_create(name="figures")


def _memory(ns, text, category="note", **extra):
    return services.memory_create(namespace=ns, content=text, category=category, **extra).memory


def _log(ns, when, latency, results, **fields):
    row = QueryLog.objects.create(namespace=ns, query=fields.pop("query", "q"),
                                  latency_ms=latency, results=results, **fields)  # fmt: skip
    QueryLog.objects.filter(pk=row.pk).update(created_at=when)
    return row


def test_search_figures_are_aggregated_exactly(ns, embedding_model):
    a, b = _memory(ns, "alpha fact", "fact"), _memory(ns, "beta decision", "decision")
    A, B = str(a.pk), str(b.pk)
    now = timezone.now()
    yesterday = now - timedelta(days=1)
    both = {"keyword": 1, "semantic": 2}
    for latency in (10, 20, 30, 40):  # yesterday: p50 25, p95 38.5
        _log(ns, yesterday, latency, [{"id": A, "score": 1, "ranks": both}], query=" Where X ")
    _log(ns, now, 100, [], evidence_gap=True, query="nothing here")
    _log(ns, now, 50, [{"id": B, "score": 1, "ranks": {"semantic": 1}},
                       {"id": A, "score": 0.5, "ranks": {"graph": 3}}],
         result_feedback={B: True, A: False}, feedback_at=now, query="where x")  # fmt: skip
    _log(ns, now, 60, [{"id": A, "score": 1, "ranks": {"keyword": 1}}], was_useful=True)
    _log(ns, now - timedelta(days=40), 999, [], query="too old")
    _log(ns, now, 70, "not a list")  # a damaged row is read as no results, not an error
    p = analytics.period(30)

    days = analytics.searches_per_day(namespace=ns, p=p)
    assert [d["searches"] for d in days] == [4, 4]
    assert days[0]["p50_ms"] == 25.0 and days[0]["p95_ms"] == 38.5
    assert days[1]["gaps"] == 1 and days[1]["zero"] == 1 and days[1]["gap_rate"] == 25.0

    strategies = {s["strategy"]: s for s in analytics.strategy_contributions(namespace=ns, p=p)}
    assert strategies["keyword"]["returned"] == 5  # four yesterday, one today
    assert strategies["keyword"]["judged"] == 1 and strategies["keyword"]["useful"] == 1
    assert strategies["semantic"]["returned"] == 5 and strategies["semantic"]["useful"] == 1
    assert strategies["graph"]["judged"] == 1 and strategies["graph"]["useful_rate"] == 0.0

    queries = analytics.top_queries(namespace=ns, p=p)
    assert queries[0]["query"] == "where x" and queries[0]["searches"] == 5

    memories = analytics.top_memories(namespace=ns, p=p)
    assert [(m["id"], m["returned"], m["first"]) for m in memories] == [(A, 6, 5), (B, 1, 1)]
    assert memories[0]["label"] == "alpha fact" and memories[0]["useful"] == 1

    totals = analytics.totals(namespace=ns, p=p)
    assert totals["searches"] == 8 and totals["judged"] == 1


def test_growth_by_category_counts_what_came_before(ns, embedding_model):
    old = _memory(ns, "an old fact", "fact")
    Memory.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=100))
    _memory(ns, "a new fact", "fact")
    _memory(ns, "a new decision", "decision")
    p = analytics.period(30)
    rows = growth_by_category(namespace=ns, since=p.since, until=p.until)
    start = (p.since - timedelta(days=1)).date().isoformat()
    today = timezone.now().date().isoformat()
    assert {"day": start, "category": "fact", "created": 0, "total": 1} in rows
    assert {"day": today, "category": "fact", "created": 1, "total": 2} in rows
    assert {"day": today, "category": "decision", "created": 1, "total": 1} in rows


def test_latest_runs_one_per_job(ns):
    now = timezone.now()
    for minutes, job, scope in [(30, "pagerank", ns), (5, "pagerank", ns), (10, "decay", None)]:
        JobRun.objects.create(job=job, namespace=scope, status=RunStatus.SUCCEEDED,
                              started_at=now - timedelta(minutes=minutes))  # fmt: skip
    other = services.namespace_get_or_create(name="other")
    JobRun.objects.create(job="reembed", namespace=other, started_at=now)
    runs = latest_runs(namespace_id=ns.pk)
    assert [(r.job, round((now - r.started_at).seconds / 60)) for r in runs] == [
        ("pagerank", 5),
        ("decay", 10),
    ]


def test_large_graph_keeps_the_highest_pagerank(ns, embedding_model, settings):
    hub = _memory(ns, "the hub")
    spokes = [_memory(ns, f"spoke {i}") for i in range(6)]
    for spoke in spokes:
        services.edge_create(source=spoke, target=hub, relation="caused")
    lone = _memory(ns, "no links at all")
    Memory.objects.filter(pk=hub.pk).update(pagerank_score=0.9)
    graph = namespace_graph(ns, limit=4)
    assert graph.total == 7 and graph.sampled and len(graph.nodes) == 4
    assert graph.nodes[0]["id"] == str(hub.pk) and graph.nodes[0]["weight"] == 1.0
    assert len(graph.edges) == 3  # only edges between the kept nodes
    assert str(lone.pk) not in {n["id"] for n in namespace_graph(ns).nodes}
    assert str(lone.pk) in {n["id"] for n in namespace_graph(ns, include_unlinked=True).nodes}
    # depth 1 from a spoke: the hub; depth 2: the other spokes too
    assert len(neighbourhood(spokes[0], depth=1).nodes) == 2
    assert len(neighbourhood(spokes[0], depth=2).nodes) == 7


def test_link_endpoint_names_the_bad_field(ns, embedding_model):
    a, b = _memory(ns, "first"), _memory(ns, "second")
    foreign = _memory(services.namespace_get_or_create(name="elsewhere"), "foreign")
    make_user("root", superuser=True)
    client = Client()
    client.login(username="root", password=PASSWORD)
    url = "/ns/figures/graph/link/"
    bad = client.post(url, {"source": a.pk, "target": b.pk, "relation": "loves"})
    assert bad.status_code == 400 and "relation" in bad.json()["errors"]
    same = client.post(url, {"source": a.pk, "target": a.pk, "relation": "caused"})
    assert same.status_code == 400 and "target" in same.json()["errors"]
    away = client.post(url, {"source": a.pk, "target": foreign.pk, "relation": "caused"})
    assert away.status_code == 404 and "target" in away.json()["errors"]
    junk = client.post(url, {"source": "x", "target": b.pk, "relation": "caused"})
    assert junk.status_code == 400 and "source" in junk.json()["errors"]
    assert not CausalEdge.objects.exists()
    made = client.post(url, {"source": a.pk, "target": b.pk, "relation": "caused"})
    assert made.status_code == 201 and made.json()["edge"]["relation"] == "caused"
    assert CausalEdge.objects.filter(source=a, target=b, relation="caused").exists()
    assert client.get("/ns/figures/graph/data/?depth=7").status_code == 400
    assert client.get("/ns/figures/analytics/?days=abc").status_code == 200


def test_ui_bench_times_the_graph_and_analytics_pages(tmp_path, embedding_model, settings):
    import json

    from django.core.management import call_command

    lines = [{"content": f"Bench text {i} about group entries.", "tags": ["b"]} for i in range(40)]
    (tmp_path / "memories.jsonl").write_text("\n".join(json.dumps(x) for x in lines))
    out = io.StringIO()
    call_command("ui_bench", size=40, logs=300, edges=30, repeat=1, only="graph,analytics",
                 source=tmp_path, stdout=out, stderr=io.StringIO())  # fmt: skip
    report = out.getvalue()
    assert "300 search-log rows" in report and "| analytics (30 days) |" in report
    assert "| graph data: neighbourhood depth 2 |" in report and "| browse" not in report
    assert QueryLog.objects.filter(namespace__name="ui-bench").count() == 300
