"""The retrievers on their own, against the real Postgres (pgvector) and the real model:
each honours the scope's filters inside its SQL and ranks what it finds."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from datetime import timedelta

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.memories.services import memory_batch_create
from apps.search.config import search_settings
from apps.search.pipeline import retrieve
from apps.search.pipeline.analyse import analyse_query
from apps.search.pipeline.candidates import gather
from apps.search.pipeline.reads import semantic
from apps.search.pipeline.retrieve import apply_similarity_floor
from apps.search.pipeline.scope import Scope
from apps.search.pipeline.weights import BASE_WEIGHTS
from apps.search.types import CandidateRow, Evidence, Ranked
from apps.vectors import nearest
from apps.vectors.embeddings import embed_query
from tests.factories import BASE_TIME

pytestmark = pytest.mark.django_db


def _scope(ns, **filters) -> Scope:
    return Scope(namespace_id=ns.id, **filters)


def test_similarity_floor_and_fallback():
    hits, fallback = apply_similarity_floor([("a", 0.5), ("b", 0.2)])
    assert [h.id for h in hits] == ["a"] and fallback is False
    hits, fallback = apply_similarity_floor([("a", 0.25), ("b", 0.18), ("c", 0.1)])
    assert [h.id for h in hits] == ["a", "b"] and fallback is True
    assert apply_similarity_floor([]) == ([], False)


def test_lexical_ranks_title_hits_above_body_hits(namespace, remember):
    body, title, other = remember(
        [
            "Notes mention the invoice exporter once among many other words.",
            {"content": "How the numbers get out of the system.", "title": "Invoice exporter"},
            "Nothing about that here.",
        ]
    )
    plan = retrieve.lexical_plan("invoice exporter", namespace.id)
    hits = retrieve.lexical_search(_scope(namespace), plan, 10)
    assert [h.id for h in hits] == [str(title.id), str(body.id)]
    assert hits[0].score > hits[1].score > 0


def test_lexical_respects_the_tag_filter(namespace, remember):
    _, tagged = remember(
        ["Invoice exporter runs nightly.", {"content": "Invoice exporter fails.", "tags": ["ops"]}]
    )
    plan = retrieve.lexical_plan("invoice exporter", namespace.id)
    hits = retrieve.lexical_search(_scope(namespace, tags=("ops",)), plan, 10)
    assert [h.id for h in hits] == [str(tagged.id)]


def test_semantic_finds_by_meaning_and_reports_the_fallback(namespace, remember):
    dog, _ = remember(["Her puppy is a golden retriever called Max.", "Quarterly tax forms."])
    hits, fallback = retrieve.semantic_search(
        _scope(namespace), embed_query("what kind of dog does she have"), 10
    )
    assert hits[0].id == str(dog.id) and fallback is False
    _, fallback = retrieve.semantic_search(
        _scope(namespace), embed_query("zxq vortex quantum lattice"), 10
    )
    assert fallback in (True, False)  # either way the retriever answers without error


def test_semantic_respects_the_time_filter(namespace, remember):
    early, late = remember(
        [
            {"content": "Her puppy is a golden retriever.", "created_at": BASE_TIME},
            {"content": "Her dog is a retriever.", "created_at": BASE_TIME + timedelta(days=9)},
        ]
    )
    scope = _scope(namespace, after=BASE_TIME + timedelta(days=1))
    hits, _ = retrieve.semantic_search(scope, embed_query("her dog"), 10)
    assert [h.id for h in hits] == [str(late.id)]


def test_exact_matches_substrings_case_insensitively(namespace, remember):
    hit, _ = remember(["Set MAX_RETRIES to 5 in prod.", "Retries are capped elsewhere."])
    hits = retrieve.exact_search(_scope(namespace), ["max_retries"], 10)
    assert [h.id for h in hits] == [str(hit.id)]
    assert retrieve.exact_search(_scope(namespace), ["50%_off"], 10) == []


def test_a_phrase_named_twice_counts_twice_and_is_compared_once(namespace, remember):
    """A quoted phrase is also one of the query's entities, so the exact strategy is handed it
    twice: it weighs twice against a phrase named once, and SQL compares it once per row."""
    both, staging, freeze = remember(
        ["The staging freeze starts in MAX_RETRIES week.", "The staging freeze.", "MAX_RETRIES"]
    )
    with CaptureQueriesContext(connection) as captured:
        hits = retrieve.exact_search(
            _scope(namespace), ["staging freeze", "max_retries", "staging freeze"], 10
        )
    # 3 (the phrase twice, the identifier once), 2, 1: counted once, the last two would tie
    # and the one without the first phrase would come first.
    assert [h.id for h in hits] == [str(both.id), str(staging.id), str(freeze.id)]
    (sql,) = [q["sql"] for q in captured.captured_queries if "ILIKE" in q["sql"]]
    assert sql.count("ILIKE '%staging freeze%'") == 4  # content and title, select and filter


def test_a_memory_without_the_first_phrase_in_its_text_comes_after_one_with_it(namespace, remember):
    """The place bonus is for where the first phrase stands in the text: a memory that holds
    only another phrase, or the first one in its title alone, has no such place (it once
    counted as the earliest)."""
    late, other, titled = remember(
        [
            "After a long review of every option we chose the staging freeze.",
            "Set MAX_RETRIES to 5.",
            {"content": "Notes from Monday.", "title": "Staging freeze"},
        ]
    )
    hits = retrieve.exact_search(_scope(namespace), ["staging freeze", "max_retries"], 10)
    assert hits[0].id == str(late.id)
    assert {h.id for h in hits[1:]} == {str(other.id), str(titled.id)}
    assert hits[0].score > hits[1].score == hits[2].score == 1.0


def test_browse_is_newest_first_within_the_filters(namespace, remember):
    a, b, c = remember(["first", {"content": "second", "category": "fact"}, "third"])
    assert [r.id for r in retrieve.browse(_scope(namespace), 2)] == [str(c.id), str(b.id)]
    assert [r.id for r in retrieve.browse(_scope(namespace, categories=("fact",)), 5)] == [
        str(b.id)
    ]


def test_fetch_rows_complete_both_scores(namespace, remember):
    (memory,) = remember(["The invoice exporter writes CSV files."])
    plan = retrieve.lexical_plan("invoice csv", namespace.id)
    rows = retrieve.fetch_rows([str(memory.id)], plan, embed_query("invoice csv export"))
    row = rows[str(memory.id)]
    assert row.lexical > 0 and 0.3 < row.similarity <= 1.0


def test_window_rows_and_scope_checks(namespace, remember, other_namespace):
    a, b = remember(["one", "two"])
    (elsewhere,) = remember(["three"], ns=other_namespace)
    rows = retrieve.window_rows(_scope(namespace), [a.created_at], 3600)
    assert {r[0] for r in rows} == {str(b.id)}  # the next memory, a minute later
    allowed = retrieve.in_scope(_scope(namespace), [str(a.id), str(elsewhere.id)])
    assert allowed == {str(a.id)}
    # Read by id (beside the row fetch, which has not given the timestamps yet): the same.
    assert retrieve.window_rows(_scope(namespace), [str(a.id)], 3600, by_id=True) == rows


def test_namespace_tags_and_embeddings(namespace, remember):
    memory, plain = remember([{"content": "tagged", "tags": ["ops", "db"]}, "plain"])
    assert set(retrieve.namespace_tags(namespace.id)) == {"ops", "db"}
    items = retrieve.browse(_scope(namespace), 5)
    with_vectors = retrieve.with_embeddings(items, 1)
    assert with_vectors[0].embedding is not None and with_vectors[1].embedding is None
    assert items[0].embedding is None  # items are frozen: a new list, new items


# --- vector scans at scale (issue 10): exact for small namespaces, HNSW with iterative scan
# for large ones, a filter never leaves a page short -----------------------------------------


def test_exact_and_hnsw_scans_agree_and_a_rare_tag_fills_its_page(namespace, remember):
    notes = [f"Deployment note {i}: the staging cluster restarted after a config change."
             for i in range(40)]  # fmt: skip
    rare = [{"content": f"Her cat number {i} sleeps on the sofa all day.", "tags": ["pets"]}
            for i in range(4)]  # fmt: skip
    made = remember(notes + rare)
    query = embed_query("where does the cat sleep")
    exact, _ = retrieve.semantic_search(_scope(namespace), query, 5, -1.0, exact_max=10_000)
    hnsw, _ = retrieve.semantic_search(_scope(namespace), query, 5, -1.0, exact_max=0)
    assert [h.id for h in hnsw] == [h.id for h in exact]
    assert {h.id for h in exact[:4]} == {str(m.id) for m in made[-4:]}
    # The tag lets 4 of 44 through: the index path still returns every one of them.
    tagged, _ = retrieve.semantic_search(
        _scope(namespace, tags=("pets",)), embed_query("staging cluster"), 10, -1.0, exact_max=0
    )
    assert {h.id for h in tagged} == {str(m.id) for m in made[-4:]}


def test_ef_search_grows_with_the_namespace_and_honours_the_setting():
    sizes = [1_000, 50_000, 200_000, 413_000, 1_000_000]
    chosen = [retrieve.ef_search_for(size, 100) for size in sizes]
    assert chosen == sorted(chosen) and chosen[0] >= 100
    assert retrieve.ef_search_for(413_000, 100, setting=250) == 250
    assert retrieve.ef_search_for(10, 120) == 120  # never below the rows asked for


def test_window_rows_with_a_tag_filter_skip_memories_outside_it(namespace, remember):
    first, untagged, tagged = remember(
        [
            {"content": "alpha", "tags": ["ops"]},
            "beta, a minute later, without the tag",
            {"content": "gamma, two minutes later", "tags": ["ops"]},
        ]
    )
    rows = retrieve.window_rows(_scope(namespace, tags=("ops",)), [first.created_at], 3600)
    assert {r[0] for r in rows} == {str(tagged.id)}
    rows = retrieve.window_rows(_scope(namespace), [first.created_at], 3600)
    assert {r[0] for r in rows} == {str(untagged.id)}


def test_a_tag_few_memories_carry_is_scanned_exactly_in_a_large_namespace(
    clean_vector_graph, namespace, remember
):
    """Past exact_max memories the semantic scan walks the HNSW index, which reads memory
    vectors only; a tag filter that few memories pass is scanned exactly instead, so a tagged
    memory whose one sentence answers is ranked by that sentence (its passage), as in a small
    namespace."""
    semantic._tagged.clear()
    remember([f"Deployment note {i}: the staging cluster restarted." for i in range(12)])
    answer, _ = remember(
        [
            {
                "content": "We moved offices in May. The printer on the third floor jams on "
                "glossy paper. Parking passes are renewed in June.",
                "tags": ["facilities"],
            },
            {"content": "The lobby plants are watered on Fridays.", "tags": ["facilities"]},
        ]
    )
    query = embed_query("which printer jams on glossy paper")
    own = float(query @ np.asarray(answer.embedding, dtype=np.float32))
    scope = _scope(namespace, tags=("facilities",))

    hits, _ = retrieve.semantic_search(
        scope, query, 2, -1.0, exact_max=1, passages=semantic.PASSAGE_COSINE
    )
    assert hits[0].id == str(answer.id) and hits[0].score > own + 0.05  # its best sentence
    assert semantic.few_tagged(("facilities",), 2) and not semantic.few_tagged(("facilities",), 1)
    # A tag more memories carry than twice exact_max: the index walk, own vectors only (a
    # page it fills, else the short-page rescue scans exactly too).
    hits, _ = retrieve.semantic_search(
        scope, query, 2, -1.0, exact_max=0, passages=semantic.PASSAGE_COSINE
    )
    assert hits[0].id == str(answer.id) and hits[0].score == pytest.approx(own, abs=0.01)


def test_rows_and_items_built_without_init_carry_every_field(namespace, remember):
    """The row fetch and the pool build their frozen values without __init__ (types.unchecked,
    for speed): each must still hold every field, the same values __init__ would keep."""
    memories = remember(["The invoice exporter writes CSV files.", "Invoices go out monthly."])
    vector = embed_query("invoice csv export")
    plan = retrieve.lexical_plan("invoice csv", namespace.id)
    row = retrieve.fetch_rows([str(memories[0].id)], plan, vector)[str(memories[0].id)]
    assert set(vars(row)) == {f.name for f in fields(CandidateRow)}
    assert CandidateRow(**vars(row)) == row

    now = timezone.now()
    analysis = analyse_query("invoice csv export", vector=vector, model_name="m", now=now)
    pool = gather(
        text="invoice csv export",
        vector=vector,
        analysis=analysis,
        scope=_scope(namespace),
        weights=BASE_WEIGHTS,
        graph_enabled=False,
        config=search_settings(),
    )
    assert set(pool.items) == {str(m.id) for m in memories}
    for item in pool.items.values():
        assert set(vars(item)) == {f.name for f in fields(Ranked)}
        assert set(vars(item.evidence)) == {f.name for f in fields(Evidence)}
        again = Ranked(**vars(item))
        assert vars(again) == vars(item)
        boosted = item.rescored(item.score * 2, ("entity", 2.0), reason="entity")
        assert (boosted.score, boosted.boosts[-1], boosted.reasons[-1]) == (
            item.score * 2,
            ("entity", 2.0),
            "entity",
        )
        assert item.boosts == () and "entity" not in item.reasons  # the original is unchanged


def _probe_and_neighbours(
    seed: int | None = None,
) -> tuple[np.ndarray, Callable[[float], np.ndarray]]:
    """A random unit vector, and a maker of unit vectors at a chosen cosine to it."""
    rng = np.random.default_rng(seed)
    probe = rng.standard_normal(384)
    probe = (probe / np.linalg.norm(probe)).astype(np.float32)

    def at_cosine(cosine: float) -> np.ndarray:
        noise = rng.standard_normal(384)
        noise -= noise.dot(probe) * probe
        noise /= np.linalg.norm(noise)
        return (cosine * probe + np.sqrt(1 - cosine**2) * noise).astype(np.float32)

    return probe, at_cosine


def _store_vectors(ns, vectors: list[np.ndarray], label: str) -> list[str]:
    """Memories with the given vectors, each in the HNSW index as it is written (a batch
    below VECTOR_INDEX_BEHIND_MIN, which the tests raise)."""
    items = [{"content": f"{label} note {i}"} for i in range(len(vectors))]
    results = memory_batch_create(
        namespace=ns, items=items, vectors=np.stack(vectors),
        check_near_duplicates=False, chunk=False, infer=False,
    )  # fmt: skip
    return [str(r.memory.id) for r in results]


def test_the_index_walk_reaches_a_namespace_behind_closer_rows_of_another_in_one_statement(
    clean_vector_graph, namespace, other_namespace, settings
):
    """The walk's settings (iterative scan, the candidate list size) travel with the walk in
    one statement: without them, a walk of 40 candidates meets only the other namespace's 120
    closer rows and comes back empty (and the exact scan must answer in a second statement)."""
    probe, at_cosine = _probe_and_neighbours(11)
    settings.VECTOR_INDEX_BEHIND_MIN = 1_000  # every row goes into the index as it is written
    _store_vectors(other_namespace, [at_cosine(0.995) for _ in range(120)], "other")
    own = _store_vectors(namespace, [at_cosine(0.9), at_cosine(0.8), at_cosine(0.1)], "own")
    with connection.cursor() as cursor:  # walk the index, as the planner does on a large table
        cursor.execute("SET LOCAL enable_sort = off")
    with CaptureQueriesContext(connection) as captured:
        walked, _ = retrieve.semantic_search(_scope(namespace), probe, 3, -1.0, exact_max=0)
    assert [h.id for h in walked] == own
    (statement,) = [q["sql"] for q in captured.captured_queries if "UNION ALL" in q["sql"]]
    assert statement.startswith("SET LOCAL hnsw.ef_search")


def test_a_walk_the_graph_cannot_lead_to_the_namespace_is_answered_by_the_exact_scan(
    namespace, other_namespace, settings
):
    """A walk visits the rows linked from the rows nearest the query. A namespace whose rows no
    such row links to (copies of one vector link only to each other; an index shared with other
    namespaces, or holding dead rows until VACUUM, can strand rows so) comes back short, or
    empty, and is then scanned exactly: the page is never short while the namespace has the
    rows. Here the stranding is built, not left to chance (CI met graphs that linked copies to
    the namespace's rows): the namespace's rows lie opposite the query, behind 200 rows of other
    directions, so none of the 400 closer rows takes them among its nearest when linked; and
    the iterative scan's budget (hnsw.max_scan_tuples) ends the walk after its first pass (the
    search's candidate list, 100 for a namespace this small), which visits only the closer rows
    and their links: pgvector then hands back what that pass visited, none of them the
    namespace's."""
    probe, at_cosine = _probe_and_neighbours()  # fresh each run: no dead copies of earlier runs'
    settings.VECTOR_INDEX_BEHIND_MIN = 1_000
    _store_vectors(other_namespace, [at_cosine(0.0) for _ in range(200)], "elsewhere")
    _store_vectors(other_namespace, [at_cosine(0.995) for _ in range(400)], "closer")
    own = _store_vectors(namespace, [at_cosine(-0.5), at_cosine(-0.6), at_cosine(-0.7)], "own")
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_sort = off")
        cursor.execute("SET LOCAL hnsw.max_scan_tuples = 1")  # no scan past the first pass
    scope = _scope(namespace)
    candidates = semantic.ef_search_for(len(own), len(own))
    assert candidates <= 400 // 2  # the closer rows fill the first pass, with room to spare
    walked = semantic.hnsw_nearest(scope, nearest.vector_literal(probe), 3, candidates)
    assert len(walked) < len(own)  # the walk alone comes back short
    with CaptureQueriesContext(connection) as captured:
        found, _ = retrieve.semantic_search(scope, probe, 3, -1.0, exact_max=0)
    assert [h.id for h in found] == own
    sent = [q["sql"] for q in captured.captured_queries]
    assert any(s.startswith("SET LOCAL hnsw.ef_search") for s in sent)  # it walked first
