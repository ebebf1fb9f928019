"""A small namespace's exact semantic scan reads the namespace's vectors kept in the process:
the same rows and scores as the scan in PostgreSQL, and never stale: a memory written, archived,
edited or superseded a moment before (in this transaction or committed by another connection)
is seen by the next search."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection, connections
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.memories.models import CausalEdge, Memory, Namespace, NamespaceChange, Review, Tag
from apps.memories.namespace_changes import namespace_changes_prune
from apps.memories.services import edge_create, memory_archive, memory_delete, memory_update
from apps.search.pipeline import coactivate, retrieve
from apps.search.pipeline.reads import namespace_vectors, semantic
from apps.search.pipeline.reads.edges import EDGES_TOUCHING, fetch_edges
from apps.search.pipeline.reads.lexical import forget_stems, lexical_plan, lexical_search
from apps.search.pipeline.reads.neighbours import window_rows
from apps.search.pipeline.reads.rows import fetch_embeddings, fetch_rows
from apps.search.pipeline.scope import Scope
from apps.search.response import PAYLOAD_SQL, payload_rows
from apps.search.services import search
from apps.vectors import nearest
from apps.vectors.embeddings import embed_query
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def read_again_at_once(monkeypatch):
    """Every change is read at the next scan (a process otherwise waits RELOAD_MIN_S between
    two reads of a namespace that keeps changing, scanning in SQL meanwhile)."""
    monkeypatch.setattr(namespace_vectors, "RELOAD_MIN_S", 0.0)


TURNS = [
    "Thanks! I went hiking last weekend. Here's the lake we camped beside.",
    "Her puppy is a golden retriever called Max. He loves the beach.",
    "The staging cluster runs on two small VMs in Frankfurt.",
    "She ran her first marathon in Berlin last autumn. It rained the whole way.",
    "They adopted a grey cat from the shelter in March.",
    "He is learning Portuguese before the trip to Lisbon. Lessons are on Tuesdays.",
]
QUERIES = ["where did they camp", "what breed is the dog", "where does staging run", "a pet cat"]


def _kept(namespace, query: str, passages: str | None = None, **scope) -> list[tuple[str, float]]:
    found = namespace_vectors.nearest(
        Scope(namespace_id=namespace.id, **scope),
        embed_query(query),
        10,
        passages,
        passages == semantic.SENTENCE_COSINE,
    )
    assert found is not None, "the namespace should be kept in the process"
    return found


def _in_sql(namespace, query: str, passages: str | None = None, **scope):
    literal = nearest.vector_literal(embed_query(query))
    return semantic.exact_nearest(Scope(namespace_id=namespace.id, **scope), literal, 10, passages)


def _same(kept: list[tuple[str, float]], sql: list[tuple[str, float]]) -> None:
    assert [i for i, _ in kept] == [i for i, _ in sql]
    for (_, a), (_, b) in zip(kept, sql, strict=True):
        assert a == pytest.approx(b, abs=1e-6)


@pytest.mark.parametrize(
    "passages", [None, semantic.PASSAGE_COSINE, semantic.SENTENCE_COSINE], ids=str
)
def test_the_kept_vectors_rank_and_score_as_the_scan_in_postgresql(
    namespace, embedding_model, passages
):
    factories.memories(namespace, TURNS)
    now = timezone.now()
    for query in QUERIES:
        _same(_kept(namespace, query, passages), _in_sql(namespace, query, passages))
        _same(
            _kept(namespace, query, passages, valid_at=now, learnt_by=now),
            _in_sql(namespace, query, passages, valid_at=now, learnt_by=now),
        )


@pytest.mark.parametrize(
    "passages", [None, semantic.PASSAGE_COSINE, semantic.SENTENCE_COSINE], ids=str
)
def test_the_row_fetch_reads_the_same_cosines_from_the_kept_vectors(
    namespace, embedding_model, passages
):
    asking = {"content": "Is the grey cat still at the shelter?", "tags": ["pets", "cats"]}
    tagged = {"content": TURNS[1], "tags": ["dogs"]}
    # The last has no passages.
    made = factories.memories(namespace, [*TURNS[2:], asking, tagged, "Short one."])
    ids = [str(m.id) for m in made]
    vector, others = (
        embed_query("a pet dog"),
        {
            "feedback": embed_query("the dog's name"),
            "query_similarity": embed_query("what breed is the dog"),
        },
    )
    scope = Scope(namespace_id=namespace.id)
    in_sql = fetch_rows(ids, None, vector, others, passages)
    with namespace_vectors.checked_once():
        assert namespace_vectors.cosines(scope, ids, {"q": vector}) is not None  # kept
        kept = fetch_rows(ids, None, vector, others, passages, scope=scope)
    assert kept.keys() == in_sql.keys() == set(ids)
    for key, row in in_sql.items():
        assert kept[key].similarity == pytest.approx(row.similarity, abs=1e-6)
        assert kept[key].cosines.keys() == row.cosines.keys()
        for name, value in row.cosines.items():
            assert kept[key].cosines[name] == pytest.approx(value, abs=1e-6), name
        assert kept[key].tags == row.tags and kept[key].asks == row.asks
    assert set(kept[ids[-3]].tags) == {"pets", "cats"} and kept[ids[-3]].asks
    assert kept[ids[-2]].tags == ("dogs",) and not kept[ids[-2]].asks
    if passages:  # a memory without passages scores 0 as in SQL; another's best passage counts
        assert kept[ids[-1]].cosines["passage"] == 0.0
        assert any(row.cosines["passage"] > row.similarity for row in kept.values())


def test_a_tag_linked_unlinked_or_renamed_and_a_text_that_now_asks_reach_the_next_fetch(
    namespace, embedding_model
):
    """The row fetch reads tag names and question marks from the kept rows: each change to
    them moves the namespace's log, so the next fetch reads the rows again."""
    cat, dog = factories.memories(namespace, [{"content": TURNS[4], "tags": ["pets"]}, TURNS[1]])
    ids = [str(cat.id), str(dog.id)]
    scope = Scope(namespace_id=namespace.id)
    vector = embed_query("a pet")

    def fetched() -> dict:
        with namespace_vectors.checked_once():
            assert namespace_vectors.facts(scope, ids, None) is not None  # from the kept rows
            rows = fetch_rows(ids, None, vector, None, None, scope=scope)
        in_sql = fetch_rows(ids, None, vector, None, None)
        assert {k: (r.tags, r.asks) for k, r in rows.items()} == {
            k: (r.tags, r.asks) for k, r in in_sql.items()
        }
        return rows

    assert fetched()[ids[0]].tags == ("pets",) and fetched()[ids[1]].tags == ()
    dog.tags.add(Tag.objects.create(name="dogs"))
    assert fetched()[ids[1]].tags == ("dogs",)
    Tag.objects.filter(name="pets").update(name="animals")
    assert fetched()[ids[0]].tags == ("animals",)
    cat.tags.clear()
    assert fetched()[ids[0]].tags == ()
    assert not fetched()[ids[1]].asks
    # The text alone (no new embedding): only the log's content column notices.
    Memory.objects.filter(pk=dog.pk).update(content="Is Max still a golden retriever?")
    assert fetched()[ids[1]].asks


ROW_FIELDS = (
    "created_at",
    "external_id",
    "file_path",
    "tier",
    "importance",
    "stability",
    "pagerank",
    "tags",
    "asks",
    "lexical",
)
KEYWORD_QUERIES = [
    "where is the staging cluster",  # a title word (weight A) and body words
    "the lake and the shelter",  # body words (C) only
    "marathon pets dogs",  # a tag (B) and a trigger phrase (B)
    "deploy notes",  # a word of a file path (D)
    "nothing here matches",
]


def _both_fetches(namespace, ids: list[str], query: str) -> tuple[dict, dict]:
    """The row fetch of `ids` under `query`'s keyword plan: from the kept rows, then in SQL."""
    plan = lexical_plan(query, namespace.id)
    vector = embed_query(query)
    scope = Scope(namespace_id=namespace.id)
    with namespace_vectors.checked_once():
        assert namespace_vectors.facts(scope, ids, plan) is not None  # from the kept rows
        with CaptureQueriesContext(connection) as captured:
            kept = fetch_rows(ids, plan, vector, None, None, scope=scope)
    assert not [q for q in captured.captured_queries if "pagerank_score" in q["sql"]]
    return kept, fetch_rows(ids, plan, vector, None, None)


def _rows_equal(kept: dict, in_sql: dict) -> None:
    assert kept.keys() == in_sql.keys()
    for key, row in in_sql.items():
        for name in ROW_FIELDS:  # the same values, the keyword score to the last bit
            assert getattr(kept[key], name) == getattr(row, name), name


def test_the_kept_rows_give_the_row_fetch_its_columns_and_keyword_scores(
    namespace, embedding_model
):
    made = factories.memories(
        namespace,
        [
            {"content": TURNS[2], "title": "Staging cluster", "file_path": "ops/deploy-notes.md"},
            {"content": TURNS[3], "tags": ["marathon"], "tier": "constitutional"},
            {"content": TURNS[4], "trigger_phrases": ["pets and dogs"], "importance": 0.9},
            {"content": TURNS[0], "external_id": "D1:3"},
            {"content": TURNS[1]},
        ],
    )
    ids = [str(m.id) for m in made]
    for query in KEYWORD_QUERIES:
        kept, in_sql = _both_fetches(namespace, ids, query)
        _rows_equal(kept, in_sql)
    kept, _ = _both_fetches(namespace, ids, "where is the staging cluster")
    titled, plain = kept[ids[0]].lexical, kept[ids[4]].lexical
    assert titled > 0 and plain == 0.0  # the title's words count; a memory without them: 0
    assert kept[ids[1]].tier == "constitutional" and kept[ids[2]].importance == 0.9


def test_an_edit_of_a_column_the_row_fetch_reads_reaches_the_next_kept_fetch(
    namespace, embedding_model
):
    """Each column the kept rows give the row fetch moves the namespace's log when it
    changes (migration memories 0032), so the next fetch reads the rows again."""
    made = factories.memories(namespace, TURNS[:3])
    ids = [str(m.id) for m in made]
    query = "where is the staging cluster"
    first, _ = _both_fetches(namespace, ids, query)
    assert first[ids[0]].lexical == 0.0
    changes = [
        {"title": "The staging cluster"},  # the full-text vector: a title word now matches
        {"tier": "scratch"},
        {"file_path": "notes/staging.md"},
        {"importance": 0.1},
        {"stability": 0.3},
        {"pagerank_score": 0.25},
    ]
    for change in changes:
        Memory.objects.filter(pk=made[0].pk).update(**change)
        kept, in_sql = _both_fetches(namespace, ids, query)
        _rows_equal(kept, in_sql)
    row = kept[ids[0]]
    assert row.lexical > 0 and row.tier == "scratch" and row.file_path == "notes/staging.md"
    assert (row.importance, row.stability, row.pagerank) == (0.1, 0.3, 0.25)


def _keyword_both_ways(namespace, query: str, settings, **plan) -> tuple[list, list]:
    """The keyword strategy's hits (id, score) with its plan: from the kept rows (the terms'
    counts too), then in SQL."""
    scope = Scope(namespace_id=namespace.id, valid_at=timezone.now())
    with namespace_vectors.checked_once():
        kept_plan = lexical_plan(query, namespace.id, scope=scope, **plan)
        assert namespace_vectors.keyword(scope, kept_plan, 10) is not None  # from the kept rows
        with CaptureQueriesContext(connection) as captured:
            kept = lexical_search(scope, kept_plan, 10)
    assert not captured.captured_queries
    kept_rows = settings.SEARCH_VECTOR_CACHE_ROWS
    settings.SEARCH_VECTOR_CACHE_ROWS = 0  # nothing kept: SQL
    try:
        sql_plan = lexical_plan(query, namespace.id, scope=scope, **plan)
        in_sql = lexical_search(scope, sql_plan, 10)
    finally:
        settings.SEARCH_VECTOR_CACHE_ROWS = kept_rows
    assert kept_plan == sql_plan  # the same counts, so the same weights
    return [(h.id, h.score) for h in kept], [(h.id, h.score) for h in in_sql]


def test_the_kept_rows_find_the_keyword_hits_sql_finds(namespace, embedding_model, settings):
    made = factories.memories(
        namespace,
        [
            {"content": TURNS[2], "title": "Staging cluster", "file_path": "ops/deploy-notes.md"},
            {"content": "The staging cluster moved to Paris.", "tags": ["staging"]},
            {"content": TURNS[4], "trigger_phrases": ["pets and dogs"]},
            {"content": "Her dogs and the cat share one basket."},
            *TURNS[:2],
        ],
    )
    ended = factories.memories(namespace, ["The staging cluster once ran in Dublin."])[0]
    Memory.objects.filter(pk=ended.pk).update(valid_until=timezone.now() - timedelta(days=1))
    pending = factories.memories(namespace, ["A staging note waiting for review."])[0]
    Memory.objects.filter(pk=pending.pk).update(review=Review.PENDING)
    for query in [*KEYWORD_QUERIES, "staging cluster in Dublin", "dogs and cats"]:
        kept, in_sql = _keyword_both_ways(namespace, query, settings)
        assert kept == in_sql  # the same memories, scores and order
    kept, _ = _keyword_both_ways(namespace, "staging cluster", settings)
    assert [i for i, _ in kept][:2] == [str(made[0].id), str(made[1].id)]  # title, then tag
    assert str(ended.id) not in {i for i, _ in kept} and str(pending.id) not in {i for i, _ in kept}
    # Ties (one moment, the same score) come by id, from both.
    moment = timezone.now() - timedelta(hours=1)
    tied = factories.memories(
        namespace,
        [{"content": f"The hounds {verb}.", "created_at": moment} for verb in ("slept", "ran")],
    )
    kept, in_sql = _keyword_both_ways(namespace, "hounds", settings)
    assert kept == in_sql and [i for i, _ in kept] == sorted(str(m.id) for m in tied)
    # Over the row budget, a memory with two of the common terms is a candidate (pairs).
    budget = {"row_budget": 2, "pool": 1}
    kept, in_sql = _keyword_both_ways(namespace, "staging cluster dogs cat", settings, **budget)
    assert kept == in_sql and kept
    plan = lexical_plan("staging cluster dogs cat", namespace.id, **budget)
    assert plan.pairs and not plan.sample


def test_a_memory_without_an_embedding_leaves_the_keyword_strategy_to_sql(
    namespace, embedding_model
):
    factories.memories(namespace, TURNS[:2])
    bare = factories.bare_memories(namespace, 1, lambda i: {"content": "hiking by the lake"})[0]
    scope = Scope(namespace_id=namespace.id)
    with namespace_vectors.checked_once():
        plan = lexical_plan("hiking lake", namespace.id, scope=scope)
        assert namespace_vectors.keyword(scope, plan, 10) is None
        hits = lexical_search(scope, plan, 10)
    assert str(bare.id) in {h.id for h in hits}  # found in SQL, where the kept rows lack it


def _edges_both_ways(namespace, ids: list[str]) -> list:
    """The graph walk's edges within two hops of `ids`: from the kept links, then in SQL."""
    scope = Scope(namespace_id=namespace.id)
    with namespace_vectors.checked_once():
        assert namespace_vectors.edges_touching(scope, ids) is not None  # from the kept links
        with CaptureQueriesContext(connection) as captured:
            kept = fetch_edges(namespace.id, ids, 2, scope)
    assert not [q for q in captured.captured_queries if q["sql"] == EDGES_TOUCHING]
    in_sql = fetch_edges(namespace.id, ids, 2)
    assert kept == in_sql  # the same links, in the same order (newest first, hop by hop)
    return kept


def test_the_kept_links_give_the_graph_walk_its_edges_and_follow_every_change(
    namespace, embedding_model
):
    a, b, c, d = factories.memories(namespace, TURNS[:4])
    assert _edges_both_ways(namespace, [str(a.id)]) == []
    edge_create(source=a, target=b, relation="caused", strength=0.7)
    edge_create(source=c, target=b, relation="supersedes")
    edge_create(source=d, target=c, relation="contradicts")  # three hops from a
    edges = _edges_both_ways(namespace, [str(a.id)])
    assert {(s, t) for s, t, _, _ in edges} == {(str(a.id), str(b.id)), (str(c.id), str(b.id))}
    CausalEdge.objects.filter(source=a).update(strength=0.6)  # SQL's own write: no service
    assert (str(a.id), str(b.id), "caused", 0.6) in _edges_both_ways(namespace, [str(a.id)])
    memory_delete(memory=c)  # its links go with it (a cascade): the log moves all the same
    assert _edges_both_ways(namespace, [str(a.id)]) == [(str(a.id), str(b.id), "caused", 0.6)]


def test_the_payload_asks_only_for_the_links_a_kept_namespace_holds(namespace, embedding_model):
    a, b, _ = factories.memories(
        namespace, ["Deploys go out on Fridays.", "Never deploy on a Friday.", TURNS[0]]
    )
    scope = Scope(namespace_id=namespace.id)

    def searched() -> tuple[dict, list[str]]:
        with CaptureQueriesContext(connection) as captured:
            response = search(namespace=namespace, query="deploys on Fridays", log=False)
        sent = [q["sql"] for q in captured.captured_queries if "m.origin_door" in q["sql"]]
        return response.flags, sent

    def relations() -> frozenset:
        with namespace_vectors.checked_once():
            assert namespace_vectors.edge_relations(scope) is None  # not read in this search yet
            namespace_vectors.edges_touching(scope, [])  # now it is
            found = namespace_vectors.edge_relations(scope)
        assert found is not None
        return found

    flags, sent = searched()
    assert relations() == frozenset() and flags["contradictions"] == []
    assert "supersedes" not in sent[0] and "contradicts" not in sent[0]
    edge_create(source=a, target=b, relation="contradicts")
    flags, sent = searched()
    assert relations() == {"contradicts"} and "contradicts" in sent[0]
    assert [str(a.id), str(b.id)] in flags["contradictions"]
    # The leaner statements read the same rows as the whole one, where no link is left out.
    ranked = retrieve.browse(scope, 10)
    whole = payload_rows(ranked)
    assert payload_rows(ranked, relations={"contradicts"}) == whole
    assert payload_rows(ranked, relations=frozenset()) == {
        k: {**row, "contradicts": None} for k, row in whole.items()
    }
    assert len(PAYLOAD_SQL) == 4


def test_an_exact_search_does_not_check_the_namespace_for_its_links(namespace, embedding_model):
    factories.memories(namespace, ["Deploys go out on Fridays.", TURNS[0]])
    search(namespace=namespace, query="deploys", log=False)  # the process keeps the namespace
    with CaptureQueriesContext(connection) as captured:
        response = search(namespace=namespace, query="Fridays", mode="exact", log=False)
    assert [m["content"] for m in response.memories] == ["Deploys go out on Fridays."]
    sent = [q["sql"] for q in captured.captured_queries]
    assert not [q for q in sent if "memories_namespacechange" in q]
    assert [q for q in sent if "m.origin_door" in q and "supersedes" in q]  # the whole payload


def _session(namespace) -> list[Memory]:
    """A dialog session imported with one date (external ids give the order; "D1:10" after
    "D1:9"), notes a minute apart around it, and memories no search may find."""
    day = factories.BASE_TIME
    turns = [
        {"content": TURNS[i], "external_id": f"D1:{n}", "created_at": day}
        for i, n in ((0, 10), (1, 2), (2, 9))
    ]
    notes = [
        {"content": TURNS[3], "created_at": day - timedelta(minutes=30)},
        {"content": TURNS[4], "created_at": day + timedelta(minutes=20)},
        {"content": TURNS[5], "created_at": day + timedelta(hours=5)},  # past the gap
    ]
    made = factories.memories(namespace, turns + notes)
    ended, archived = factories.memories(
        namespace,
        [
            {"content": "An ended fact.", "created_at": day - timedelta(minutes=10)},
            {"content": "An archived note.", "created_at": day + timedelta(minutes=10)},
        ],
    )
    Memory.objects.filter(pk=ended.pk).update(valid_until=day)
    memory_archive(memory=archived)
    (unembedded,) = factories.bare_memories(
        namespace, 1, lambda i: {"created_at": day + timedelta(hours=4, minutes=59)}
    )
    return [*made, ended, unembedded]


def _neighbours_both_ways(scope: Scope, ids: list[str]) -> dict[str, tuple[str, ...]]:
    """The temporal neighbours from the kept timeline, checked against the rows SQL reads."""
    with namespace_vectors.checked_once():
        kept = namespace_vectors.temporal_rows(scope, ids, coactivate.MAX_GAP)
    assert kept is not None, "the namespace should be kept in the process"
    sql = window_rows(scope, ids, coactivate.MAX_GAP.total_seconds(), by_id=True)
    assert [r[0] for r in kept] == [r[0] for r in coactivate.in_order(sql)]
    gap = namespace_vectors.micros_of(coactivate.MAX_GAP)
    found = coactivate.neighbours_on_line([r[0] for r in kept], coactivate.links(kept, gap))
    assert found == coactivate.temporal_neighbours(sql)
    return found


def test_the_kept_timeline_gives_the_temporal_neighbours_sql_reads(namespace, embedding_model):
    made = _session(namespace)
    ten, two, nine, before, after, late, ended, unembedded = (str(m.id) for m in made)
    now = timezone.now()
    scope = Scope(namespace_id=namespace.id, valid_at=now)
    every = _neighbours_both_ways(scope, [ten, before, late])
    # The session in its natural order, the notes around it; the ended fact is out of scope,
    # the archived note unseen; the memory without a vector is read as SQL reads it (the
    # nearest before the late note, which is no neighbour of the note after the session).
    assert every[before] == (two,) and every[two] == (before, nine) and every[nine] == (two, ten)
    assert every[ten] == (nine, after)
    assert every[unembedded] == ()
    assert ended not in every
    for ids in ([two], [ten, nine], [late, unembedded]):
        _neighbours_both_ways(scope, ids)
    # Before the note after the session: of the three turns at that moment, the one stored
    # last, which SQL's index scan reads first.
    assert list(_neighbours_both_ways(scope, [after])) == [nine]
    # At any moment the ended fact is in scope: the nearest memory before the session.
    at_any_time = _neighbours_both_ways(Scope(namespace_id=namespace.id), [two])
    assert at_any_time[two] == (ended, nine)


def test_a_turn_given_another_external_id_moves_in_the_next_kept_timeline(
    namespace, embedding_model
):
    ten, two, nine, *_ = _session(namespace)
    scope = Scope(namespace_id=namespace.id)
    assert _neighbours_both_ways(scope, [str(two.id)])[str(two.id)][1] == str(nine.id)
    # A bare UPDATE of the column alone: only the log's external_id column notices.
    Memory.objects.filter(pk=ten.pk).update(external_id="D1:1")
    assert _neighbours_both_ways(scope, [str(two.id)])[str(two.id)] == (str(ten.id), str(nine.id))


def test_the_row_fetch_computes_in_postgresql_what_the_process_does_not_keep(
    namespace, embedding_model
):
    made = factories.memories(namespace, TURNS)
    memory_archive(memory=made[0])  # archived: not kept, yet asked for by id
    ids = [str(m.id) for m in made]
    vector = embed_query("where did they camp")
    scope = Scope(namespace_id=namespace.id)
    with namespace_vectors.checked_once():
        assert namespace_vectors.cosines(scope, ids, {"q": vector}) is None
        rows = fetch_rows(ids, None, vector, None, semantic.PASSAGE_COSINE, scope=scope)
    assert rows[ids[0]].similarity > 0.3  # its cosine was still computed (in SQL)


def test_the_stored_vectors_read_from_the_process_are_the_stored_ones(namespace, embedding_model):
    made = factories.memories(namespace, TURNS)
    memory_archive(memory=made[0])  # not kept: read from PostgreSQL beside the others
    ids = [str(m.id) for m in made]
    scope = Scope(namespace_id=namespace.id)
    with namespace_vectors.checked_once():
        assert namespace_vectors.embeddings(scope, ids).keys() == set(ids[1:])
        kept = fetch_embeddings(ids, scope)
    stored = fetch_embeddings(ids)
    assert kept.keys() == stored.keys() == set(ids)
    for key, vector in stored.items():
        assert kept[key].dtype == vector.dtype and (kept[key] == vector).all()


def test_rows_with_infinite_or_open_times_are_in_scope_as_in_postgresql(namespace, embedding_model):
    made = factories.memories(namespace, TURNS)
    with connection.cursor() as cursor:  # rows written by SQL, as tests/hostile/poison.py does
        cursor.execute(
            "UPDATE memories_memory SET valid_until = 'infinity', valid_from = '-infinity' "
            "WHERE id = %s",
            [made[0].id],
        )
        cursor.execute(
            "UPDATE memories_memory SET created_at = 'infinity' WHERE id = %s", [made[1].id]
        )
        cursor.execute(
            "UPDATE memories_memory SET valid_until = '-infinity' WHERE id = %s", [made[2].id]
        )
    now = timezone.now()
    for query in QUERIES:
        kept = _kept(namespace, query, valid_at=now, learnt_by=now)
        _same(kept, _in_sql(namespace, query, valid_at=now, learnt_by=now))
        assert str(made[0].id) in dict(kept)  # open on both sides
        assert str(made[1].id) not in dict(kept) and str(made[2].id) not in dict(kept)


def test_a_write_an_archive_an_edit_and_a_supersession_are_seen_by_the_next_scan(
    namespace, embedding_model
):
    made = factories.memories(namespace, TURNS)
    assert _kept(namespace, "what breed is the dog")[0][0] == str(made[1].id)

    (poodle,) = factories.memories(namespace, ["Their new dog is a poodle puppy named Bella."])
    assert _kept(namespace, "what breed is the dog")[0][0] == str(poodle.id)

    memory_archive(memory=poodle)
    assert str(poodle.id) not in dict(_kept(namespace, "what breed is the dog"))

    # Written and changed in this one transaction: the row keeps its xmin, not its place.
    memory_update(memory=Memory.objects.get(pk=made[2].pk), content="Bella is a poodle dog.")
    _same(_kept(namespace, "is Bella a poodle"), _in_sql(namespace, "is Bella a poodle"))
    assert _kept(namespace, "is Bella a poodle")[0][0] == str(made[2].id)

    now = timezone.now()
    Memory.objects.filter(pk=made[2].pk).update(valid_until=now - timedelta(seconds=1))
    assert str(made[2].id) not in dict(_kept(namespace, "is Bella a poodle", valid_at=now))
    assert _kept(namespace, "is Bella a poodle")[0][0] == str(made[2].id)  # at any time


def test_a_filter_or_a_namespace_over_the_budget_is_scanned_in_postgresql(
    namespace, embedding_model, settings
):
    factories.memories(namespace, TURNS)
    vector = embed_query("where did they camp")
    filtered = Scope(namespace_id=namespace.id, tags=("travel",))
    assert namespace_vectors.nearest(filtered, vector, 10, None, False) is None
    settings.SEARCH_VECTOR_CACHE_ROWS = len(TURNS)  # the passages do not fit beside them
    whole = Scope(namespace_id=namespace.id)
    assert namespace_vectors.nearest(whole, vector, 10, semantic.PASSAGE_COSINE, False) is None
    found = search(namespace=namespace, query="where did they camp", log=False)
    assert "lake we camped" in found.memories[0]["content"]


def test_a_search_checks_the_namespace_once_for_its_semantic_and_feedback_scans(
    namespace, embedding_model
):
    factories.memories(namespace, TURNS)
    search(namespace=namespace, query="what breed is the dog", log=False)  # loads the vectors
    with CaptureQueriesContext(connection) as captured:
        found = search(namespace=namespace, query="what breed is the dog", log=False)
    statements = [q["sql"] for q in captured.captured_queries]
    assert sum("FROM memories_namespacechange" in s for s in statements) == 1
    # Neither scan in PostgreSQL (the statements are logged with their values in place), and
    # the row fetch reads its cosines from the kept vectors too.
    assert not any("::vector) AS sim FROM" in s or "AS sim, true AS own" in s for s in statements)
    assert not any("coalesce(1 - (m.embedding <=>" in s for s in statements)
    assert not any("p.embedding <=>" in s for s in statements)
    # Nor the candidates' tag names and question marks.
    assert not any("memories_memory_tags mt" in s or "rtrim(m.content)" in s for s in statements)
    # Nor are the feedback seeds' and the head's stored vectors read there.
    assert not any("vector_send(embedding)" in s for s in statements)
    # Nor the candidates' temporal neighbours (the context and co-activation stages).
    assert not any("enable_sort = off" in s for s in statements)
    assert "golden retriever" in found.memories[0]["content"]


def test_a_new_query_is_stemmed_by_the_statement_that_checks_the_namespace(
    namespace, embedding_model
):
    """A query text not stemmed before brings the namespace's check along: one statement, and
    the check still sees what was written since the namespace was read."""
    factories.memories(namespace, TURNS)
    search(namespace=namespace, query="what breed is the dog", log=False)  # loads the vectors
    forget_stems()
    with CaptureQueriesContext(connection) as captured:
        search(namespace=namespace, query="where did they camp", log=False)
    checks = [q["sql"] for q in captured.captured_queries if "memories_namespacechange" in q["sql"]]
    assert len(checks) == 1 and "to_tsvector" in checks[0]
    (violin,) = factories.memories(namespace, ["She takes violin lessons on Saturday mornings."])
    found = search(namespace=namespace, query="who takes violin lessons", log=False)
    assert found.memories[0]["id"] == str(violin.id)
    with CaptureQueriesContext(connection) as again:  # a stemmed query: the check alone
        search(namespace=namespace, query="who takes violin lessons", log=False)
    checks = [q["sql"] for q in again.captured_queries if "memories_namespacechange" in q["sql"]]
    assert len(checks) == 1 and "to_tsvector" not in checks[0]


@pytest.mark.django_db(transaction=True)
def test_a_memory_another_connection_commits_is_found_by_the_next_search(embedding_model):
    namespace = Namespace.objects.create(name="kept-vectors")
    factories.memories(namespace, TURNS)
    assert _kept(namespace, "a violin lesson") != []  # the vectors are kept now

    def write_elsewhere() -> None:
        try:
            factories.memories(namespace, ["She takes violin lessons on Saturday mornings."])
        finally:
            connections.close_all()

    writer = threading.Thread(target=write_elsewhere)
    writer.start()
    writer.join()
    top_id, _ = _kept(namespace, "a violin lesson")[0]
    assert "violin" in Memory.objects.get(pk=top_id).content


def test_a_namespace_that_keeps_changing_is_scanned_in_postgresql_between_reads(
    namespace, embedding_model, monkeypatch
):
    monkeypatch.setattr(namespace_vectors, "RELOAD_MIN_S", 3600.0)
    factories.memories(namespace, TURNS)
    _kept(namespace, "a violin lesson")  # read now
    (violin,) = factories.memories(namespace, ["She takes violin lessons on Saturday mornings."])
    vector = embed_query("a violin lesson")
    whole = Scope(namespace_id=namespace.id)
    assert namespace_vectors.nearest(whole, vector, 10, None, False) is None  # not read again
    hits, _ = semantic.semantic_search(whole, vector, 10)
    assert hits[0].id == str(violin.id)  # the scan in SQL sees it


def test_usage_counts_leave_the_log_alone_and_the_prune_keeps_it_short(namespace, embedding_model):
    made = factories.memories(namespace, TURNS)
    log = NamespaceChange.objects.filter(namespace=namespace)
    written = log.count()
    assert written >= 2  # the batch's statements: its memories, its passages
    Memory.objects.filter(pk=made[0].pk).update(access_count=5, last_accessed_at=timezone.now())
    assert log.count() == written  # no column a search reads changed
    _kept(namespace, "where did they camp")
    before = namespace_vectors._fingerprint(namespace.id)

    assert namespace_changes_prune(keep=timedelta(0)) == {
        "changes_deleted": written - 1,  # all but the newest
        "namespaces": 1,
    }
    assert log.count() == 1
    assert namespace_vectors._fingerprint(namespace.id) != before  # read again
    assert namespace_changes_prune(keep=timedelta(0))["changes_deleted"] == 0  # quiet now
    _same(_kept(namespace, "where did they camp"), _in_sql(namespace, "where did they camp"))
