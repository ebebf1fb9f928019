"""A query term that most of a large namespace contains ("use" in a manual) still counts in the
keyword score, but brings in no candidates of its own: scoring its every match made a search
at 413k memories take 0.4 s. The cut is set low here so a few memories stand for many."""

from __future__ import annotations

import pytest

from apps.memories.models import Namespace
from apps.search.pipeline import retrieve
from apps.search.pipeline.scope import Scope

pytestmark = pytest.mark.django_db

NOTES = [
    "We use Redis for caching.",
    "We use Postgres for storage.",
    "We use nginx in front of the web processes.",
    "We use Celery for background jobs.",
    "Slovak translations use UTF-8 throughout.",
]


@pytest.fixture
def namespace_id(remember):
    remember(NOTES)
    return Namespace.objects.get(name="test-ns").id


def _keyword_hits(namespace_id: int, query: str, common_rows: int) -> list[tuple[str, float]]:
    plan = retrieve.lexical_plan(query, namespace_id, common_rows)
    hits = retrieve.lexical_search(Scope(namespace_id=namespace_id), plan, 50)
    return [(h.id, h.score) for h in hits]


def test_a_common_term_matches_only_alongside_a_rarer_one(namespace_id):
    everything = _keyword_hits(namespace_id, "use slovak", common_rows=0)
    assert len(everything) == len(NOTES)  # without the cut, "use" alone lets every note in
    cut = _keyword_hits(namespace_id, "use slovak", common_rows=3)
    # only the note with the rarer word, still first, and with the same score: "use" still
    # counts in it
    assert cut == everything[:1]


def test_a_query_of_only_common_terms_still_finds_its_matches(namespace_id):
    assert len(_keyword_hits(namespace_id, "use", common_rows=3)) == len(NOTES)


def test_a_namespace_without_common_terms_matches_as_before(namespace_id):
    before = _keyword_hits(namespace_id, "use slovak", common_rows=0)
    assert _keyword_hits(namespace_id, "use slovak", common_rows=5_000) == before
