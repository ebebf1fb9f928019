"""In a large namespace the keyword strategy scores the memories of the query's rarest terms
(up to a row budget) and those holding two query terms, not every memory holding any term:
at 413k memories scoring every match was most of a search's time. The budget is set low here
so a few memories stand for many."""

from __future__ import annotations

import pytest

from apps.memories.models import Namespace
from apps.search.pipeline import retrieve
from apps.search.pipeline.reads import stats
from apps.search.pipeline.scope import Scope

pytestmark = pytest.mark.django_db

NOTES = [
    "The zebra crossing by the office was repainted.",
    "A yak carried the tent up the valley.",
    "The yak herders sell cheese in the village.",
    "Yak wool keeps the herders warm.",
    "The xylophone in the music room is out of tune.",
    "Children played the xylophone at the fair.",
    "A xylophone made of yak bones stood in the museum.",
]


@pytest.fixture
def namespace_id(remember):
    remember(NOTES)
    return Namespace.objects.get(name="test-ns").id


def _hits(namespace_id: int, query: str, **budget) -> list[tuple[str, float]]:
    plan = retrieve.lexical_plan(query, namespace_id, **budget)
    hits = retrieve.lexical_search(Scope(namespace_id=namespace_id), plan, 50)
    return [(h.id, round(h.score, 9)) for h in hits]


def _content(ids: list[str]) -> set[str]:
    from apps.memories.models import Memory

    return set(Memory.objects.filter(id__in=ids).values_list("content", flat=True))


def test_past_the_budget_a_commoner_term_brings_in_only_memories_with_a_second_term(
    namespace_id,
):
    everything = _hits(namespace_id, "zebra yak xylophone")
    assert len(everything) == len(NOTES)
    budgeted = _hits(namespace_id, "zebra yak xylophone", row_budget=2, pool=1)
    assert _content([i for i, _ in budgeted]) == {NOTES[0], NOTES[6]}
    # the two are the best two of the full scoring, with the same scores
    assert sorted(budgeted, key=lambda h: -h[1]) == everything[:2]


def test_when_the_rarest_terms_cannot_fill_the_pool_the_next_is_sampled(namespace_id):
    plan = retrieve.lexical_plan("zebra xylophone", namespace_id, row_budget=2, pool=2)
    assert (plan.match, plan.sample, plan.sample_rows) == (("zebra",), "xylophon", 2)
    budgeted = _hits(namespace_id, "zebra xylophone", row_budget=2, pool=2)
    # zebra's one memory, and two of the three xylophone notes: no more than the budget
    found = _content([i for i, _ in budgeted])
    assert len(found) == 3 and NOTES[0] in found
    assert found - {NOTES[0]} < {NOTES[4], NOTES[5], NOTES[6]}


def test_a_term_past_the_budget_on_its_own_is_sampled(namespace_id):
    budgeted = _hits(namespace_id, "yak", row_budget=2, pool=1)
    assert len(budgeted) == 2
    assert _content([i for i, _ in budgeted]) < {NOTES[1], NOTES[2], NOTES[3], NOTES[6]}


def test_a_query_whose_matches_fit_the_budget_is_planned_as_before(namespace_id):
    plan = retrieve.lexical_plan("zebra yak xylophone", namespace_id, row_budget=50, pool=10)
    assert plan.pairs == ()
    assert plan.match == ()
    assert _hits(namespace_id, "zebra yak", row_budget=50) == _hits(namespace_id, "zebra yak")


def test_a_common_term_is_counted_only_past_the_cut(namespace_id):
    stats._frequencies.clear()
    capped = stats.document_frequencies(namespace_id, ("yak", "zebra"), cap=2)
    stats._frequencies.clear()
    exact = stats.document_frequencies(namespace_id, ("yak", "zebra"))
    assert exact == [4, 1]
    # "yak" is known to be in more than 2 memories (the rest is the planner's estimate)
    assert capped[0] > 2
    assert capped[1] == 1


def _pending_pages() -> int:
    """Pages merged out of the full-text index's pending list by this call (0: it was empty)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT gin_clean_pending_list('memory_search_vector_gin'::regclass)")
        return cursor.fetchone()[0]


def test_the_statistics_refresh_after_an_import_merges_the_full_text_pending_list(remember):
    from apps.transfer.transfer import refresh_memory_statistics

    _pending_pages()
    remember([f"Imported note {i} about kettles and teapots." for i in range(40)])
    refresh_memory_statistics()
    assert _pending_pages() == 0
    remember([f"Another note {i} about saucers." for i in range(40)])
    assert _pending_pages() > 0  # written rows do wait there until something merges them
