"""The analytics page's daily roll-up: days before yesterday are read from it, and must give
exactly the figures the raw search log gives; feedback on an old search redoes its day."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.memories import services
from apps.search import analytics
from apps.search.feedback import feedback_record
from apps.search.models import QueryLog, SearchDay, SearchDayMemory, SearchDayStrategy

pytestmark = pytest.mark.django_db


def _log(ns, when, latency, results, **fields):
    row = QueryLog.objects.create(namespace=ns, query=fields.pop("query", "q"),
                                  latency_ms=latency, results=results, **fields)  # fmt: skip
    QueryLog.objects.filter(pk=row.pk).update(created_at=when)
    return row


def _scenario(name: str, days_back: int):
    """The same searches on two consecutive days, `days_back` days ago (0: today, read from
    the raw log, and yesterday; 5: both rolled up)."""
    ns = services.namespace_get_or_create(name=name)
    a = services.memory_create(namespace=ns, content=f"alpha {name}", category="fact").memory
    b = services.memory_create(namespace=ns, content=f"beta {name}", category="fact").memory
    A, B = str(a.pk), str(b.pk)
    day = timezone.now() - timedelta(days=days_back)
    both = {"keyword": 1, "semantic": 2}
    for latency in (10, 20, 30, 40):
        _log(ns, day - timedelta(days=1), latency, [{"id": A, "score": 1, "ranks": both}],
             query=" Where X ")  # fmt: skip
    _log(ns, day, 100, [], evidence_gap=True, query="nothing here")
    _log(ns, day, 50, [{"id": B, "score": 1, "ranks": {"semantic": 1}},
                       {"id": A, "score": 0.5, "ranks": {"graph": 3}}],
         result_feedback={B: True, A: False}, feedback_at=day, query="where x")  # fmt: skip
    _log(ns, day, 60, [{"id": A, "score": 1, "ranks": {"keyword": 1}}], was_useful=True)
    _log(ns, day, 70, "not a list")
    return ns


def _figures(ns) -> dict:
    p = analytics.period(30)
    days = analytics.searches_per_day(namespace=ns, p=p)
    memories = analytics.top_memories(namespace=ns, p=p)
    return {
        "days": [{k: v for k, v in d.items() if k != "day"} for d in days],
        "totals": analytics.totals(namespace=ns, p=p, per_day=days),
        "strategies": analytics.strategy_contributions(namespace=ns, p=p),
        "queries": [
            (q["query"], q["searches"], q["gaps"]) for q in analytics.top_queries(namespace=ns, p=p)
        ],  # fmt: skip
        "memories": [
            (m["label"].split()[0], m["returned"], m["first"], m["useful"]) for m in memories
        ],  # fmt: skip
    }


@pytest.mark.parametrize("days_back", [5, 12, 20])
def test_rolled_up_days_give_the_raw_logs_figures(embedding_model, days_back):
    live = _figures(_scenario("live", 0))
    old_ns = _scenario("old", days_back)
    first = _figures(old_ns)  # rolls the old days (and whole weeks) up
    assert SearchDay.objects.filter(namespace=old_ns, searches__gt=0).count() == 2
    # Today is read from the raw log (yesterday too in the first minutes after midnight).
    assert SearchDay.objects.filter(namespace__name="live", searches__gt=0).count() <= 1
    if days_back >= 12:  # two weeks back at least one whole week lies between
        assert SearchDayMemory.objects.filter(namespace=old_ns, span=7).exists()
    again = _figures(old_ns)  # read from the roll-up only
    assert first == live and again == live
    assert live["totals"]["searches"] == 8 and live["days"][0]["p95_ms"] == 38.5


@pytest.mark.parametrize("days_back", [6, 16])
def test_feedback_on_an_old_search_redoes_its_day(embedding_model, days_back):
    ns = services.namespace_get_or_create(name="late-feedback")
    memory = services.memory_create(namespace=ns, content="gamma").memory
    row = _log(ns, timezone.now() - timedelta(days=days_back), 30,
               [{"id": str(memory.pk), "score": 1, "ranks": {"keyword": 1}}])  # fmt: skip
    p = analytics.period(30)
    [keyword] = analytics.strategy_contributions(namespace=ns, p=p)
    assert keyword["judged"] == 0 and SearchDayStrategy.objects.filter(namespace=ns).exists()
    assert analytics.top_memories(namespace=ns, p=p)[0]["useful"] == 0
    feedback_record(query_log_id=row.pk, namespace=ns, was_useful=True)
    [keyword] = analytics.strategy_contributions(namespace=ns, p=p)
    assert keyword["judged"] == 1 and keyword["useful"] == 1
    assert analytics.totals(namespace=ns, p=p)["judged"] == 1
    # Its week's sum (16 days back lies in a whole week) was redone as well.
    assert analytics.top_memories(namespace=ns, p=p)[0]["useful"] == 1


def test_the_nightly_task_rolls_every_namespace_up(embedding_model):
    from apps.search.tasks import analytics_rollup_task

    ns = services.namespace_get_or_create(name="nightly")
    _log(ns, timezone.now() - timedelta(days=3), 30, [])
    assert analytics_rollup_task() >= 363  # every closed day of the year (yesterday after 00:10)
    assert SearchDay.objects.get(namespace=ns, searches__gt=0).searches == 1
    assert analytics_rollup_task() == 0  # nothing left to do
