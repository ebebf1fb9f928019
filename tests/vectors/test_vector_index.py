"""A large batch is stored outside the HNSW index and the vector_index job adds it: the rows
are found by every nearest-neighbour read from their commit on, walk or exact scan alike, and
the job leaves the same answers with the rows inside the index."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from apps.core.health import run_checks
from apps.memories import unindexed
from apps.memories.models import Memory
from apps.memories.services import memory_batch_create
from apps.search.pipeline import retrieve
from apps.search.pipeline.scope import Scope
from apps.search.services import search
from apps.vectors.embeddings import embed_query
from tests import factories

pytestmark = pytest.mark.django_db

TOPICS = [
    "Her puppy is a golden retriever called Max.",
    "The staging cluster runs on two small VMs in Frankfurt.",
    "Quarterly tax forms are due at the end of April.",
    "He learned to bake sourdough bread during the winter.",
    "The team moved the weekly sync to Thursday mornings.",
    "Our invoices are exported to the accounting tool every night.",
    "She ran her first marathon in Berlin last autumn.",
    "The office plants are watered on Mondays by whoever arrives first.",
    "The mobile app crashes when the camera permission is denied.",
    "They adopted a grey cat from the shelter in March.",
    "The database backups are copied to a second region hourly.",
    "He is learning Portuguese before the trip to Lisbon.",
]


def _outside(namespace) -> int:
    return Memory.objects.filter(namespace=namespace, vector_indexed=False).count()


def _nearest(namespace, query: str, *, walk: bool) -> list[str]:
    """The semantic strategy's top 5: through the index walk, or by the exact scan."""
    hits, _ = retrieve.semantic_search(
        Scope(namespace_id=namespace.id), embed_query(query), 5, -1.0,
        exact_max=0 if walk else 10_000,
    )  # fmt: skip
    return [h.id for h in hits]


def _walk_finds_what_the_scan_finds(namespace, query: str) -> None:
    """Inside the index the walk is approximate (its iterative scan also steps over the test
    database's other namespaces): it must find the exact scan's best row and at least four of
    its five. A row missing from the index would be lost to the walk altogether."""
    walked, exact = _nearest(namespace, query, walk=True), _nearest(namespace, query, walk=False)
    assert walked[0] == exact[0]
    assert len(set(walked) & set(exact)) >= 4, (walked, exact)


def _walk_plan(namespace) -> str:
    """The plan of the statement search's semantic walk sends, seq scans and sorts discouraged
    as on a large table: its first branch must be served by the partial HNSW index."""
    with CaptureQueriesContext(connection) as captured:
        _nearest(namespace, "where does staging run", walk=True)
    (sent,) = [q["sql"] for q in captured.captured_queries if "UNION ALL" in q["sql"]]
    walk = sent.rsplit("; ", 1)[-1]  # the walk, after the SET LOCAL settings sent with it
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_sort = off")
        cursor.execute(f"EXPLAIN {walk}")
        return "\n".join(r[0] for r in cursor.fetchall())


def test_a_large_batch_is_found_before_the_index_holds_it_and_the_job_adds_it(
    clean_vector_graph, namespace, embedding_model, settings
):
    settings.VECTOR_INDEX_BEHIND_MIN = 8
    settings.SEARCH_EXACT_SCAN_MAX = 0  # every read below walks the index
    made = factories.memories(namespace, TOPICS)
    assert _outside(namespace) == len(TOPICS)
    assert run_checks()["vector_index"] == {"ok": True, "rows_waiting": len(TOPICS)}
    (single,) = factories.memories(namespace, ["A single note goes into the index at once."])
    assert Memory.objects.get(pk=single.pk).vector_indexed

    queries = ["what kind of dog does she have", "where does staging run", "a pet from the shelter"]
    before = {q: _nearest(namespace, q, walk=True) for q in queries}
    for q in queries:
        assert before[q] == _nearest(namespace, q, walk=False)  # the walk misses none of them
    assert before[queries[0]][0] == str(made[0].id)
    found = search(namespace=namespace, query="where does the staging cluster run?", log=False)
    assert found.memories[0]["id"] == str(made[1].id)

    # The write path's near-duplicate check walks too: it meets the row outside the index.
    (again,) = memory_batch_create(
        namespace=namespace,
        items=[{"content": "The staging cluster runs on two small VMs in Frankfurt, Germany."}],
        infer=False,
    )
    assert str(made[1].id) in [d["id"] for d in again.near_duplicates]

    call_command("run_job", "vector_index", stdout=StringIO())
    assert _outside(namespace) == 0
    assert run_checks()["vector_index"]["rows_waiting"] == 0
    assert "memory_embedding_half_hnsw" in _walk_plan(namespace)
    for q in queries:
        _walk_finds_what_the_scan_finds(namespace, q)
    assert _nearest(namespace, queries[0], walk=True)[0] == before[queries[0]][0]
    stored = Memory.objects.get(pk=made[0].pk)
    assert stored.version == 1 and stored.updated_at == made[0].updated_at  # no user change


def test_the_rows_outside_the_index_stay_within_their_bound(namespace, embedding_model, settings):
    settings.VECTOR_INDEX_BEHIND_MIN = 4
    settings.VECTOR_INDEX_BEHIND_MAX = 10
    factories.memories(namespace, TOPICS[:6])
    assert _outside(namespace) == 6
    # Six more would leave twelve outside: this batch goes into the index as it is written.
    factories.memories(namespace, TOPICS[6:], start=factories.BASE_TIME.replace(year=2025))
    assert _outside(namespace) == 6
    # A batch smaller than VECTOR_INDEX_BEHIND_MIN always goes in at once.
    factories.memories(namespace, ["One.", "Two."], start=factories.BASE_TIME.replace(year=2026))
    assert _outside(namespace) == 6


def test_the_job_adds_each_row_once_and_a_second_run_finds_nothing(
    namespace, other_namespace, embedding_model, settings
):
    settings.VECTOR_INDEX_BEHIND_MIN = 4
    factories.memories(namespace, TOPICS[:5])
    factories.memories(other_namespace, TOPICS[5:])
    assert unindexed.index_waiting(namespace) == {"rows_indexed": 5}
    assert unindexed.index_waiting(namespace) == {"rows_indexed": 0}
    assert _outside(other_namespace) == len(TOPICS) - 5  # one namespace per run


def test_an_import_says_what_waits_for_the_index(embedding_model, settings, tmp_path):
    settings.VECTOR_INDEX_BEHIND_MIN = 4
    file = tmp_path / "notes.jsonl"
    rows = [{"id": f"n{i}", "namespace": "notes", "content": t} for i, t in enumerate(TOPICS)]
    file.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    out = StringIO()
    call_command("import_memories", str(file), no_progress=True, stdout=out)
    assert f"{len(TOPICS)} memories are searchable now" in out.getvalue()
    call_command("run_job", "vector_index", stdout=StringIO())
    out = StringIO()
    call_command("import_memories", str(file), no_progress=True, stdout=out)  # all stored
    assert "searchable now" not in out.getvalue()


def test_the_near_duplicates_job_walks_the_index_and_meets_rows_outside_it(
    clean_vector_graph, namespace, embedding_model, settings, monkeypatch
):
    """In a namespace past the job's exact-scan size, its pair search walks the index; a
    near-duplicate written in a large batch (outside the index yet) is still paired."""
    from apps.queues import jobs
    from apps.queues.models import DuplicatePair

    monkeypatch.setattr(jobs, "EXACT_SCAN_MAX", 0)
    settings.VECTOR_INDEX_BEHIND_MIN = 8
    (indexed,) = factories.memories(namespace, [TOPICS[1]])
    twin = "The staging cluster runs on two small VMs in Frankfurt, Germany."
    batch = factories.memories(namespace, [twin, *TOPICS[2:9]])
    assert Memory.objects.get(pk=indexed.pk).vector_indexed and _outside(namespace) == len(batch)
    jobs.near_duplicates_update(namespace)
    pair = DuplicatePair.objects.get(namespace=namespace)
    assert {pair.first_id, pair.second_id} == {indexed.pk, batch[0].pk}
