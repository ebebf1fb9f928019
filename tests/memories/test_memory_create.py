"""The write path against the real database and the real embedding model."""

import numpy as np
import pytest

from apps.core.exceptions import ValidationFailed
from apps.memories.models import CausalEdge, Memory
from apps.memories.services import (
    edge_create,
    memory_batch_create,
    memory_create,
    memory_update,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("embedding_model")]


def test_memory_is_stored_with_a_unit_embedding_and_inferred_tags(namespace):
    result = memory_create(
        namespace=namespace,
        content="Fixed the crash when the cache was cold",
        category="learning",
        tags=["Backend"],
    )
    memory = Memory.objects.get(pk=result.memory.pk)
    assert result.created
    assert sorted(t.name for t in memory.tags.all()) == ["backend", "bugfix", "perf"]
    assert result.inferred_tags == ["bugfix", "perf"]
    assert memory.embedding is not None and len(memory.embedding) == 384
    assert np.linalg.norm(memory.embedding) == pytest.approx(1.0, abs=1e-4)
    assert memory.embedding_model == "all-MiniLM-L6-v2"


def test_a_conversation_turn_is_stored_with_only_its_given_tags(namespace):
    """One write and one batch: a turn saying its car broke is no bugfix (the keywords are for
    project notes)."""
    one = memory_create(
        namespace=namespace, content="Caroline: my car broke down again", category="conversation"
    )
    batch = memory_batch_create(
        namespace=namespace,
        items=[
            {"content": "Mel: the train was slow and crashed into my plans", "tags": ["session-1"],
             "category": "conversation"},
            {"content": "The importer crashed on an empty file", "category": "note"},
        ],
    )  # fmt: skip
    assert one.inferred_tags == [] and not one.memory.tags.exists()
    assert batch[0].inferred_tags == []
    assert [t.name for t in batch[0].memory.tags.all()] == ["session-1"]
    assert batch[1].inferred_tags == ["bugfix"]  # a note still gets its tag


def test_identical_content_returns_the_existing_memory(namespace):
    first = memory_create(namespace=namespace, content="Use UTC everywhere")
    again = memory_create(namespace=namespace, content="  Use UTC everywhere ")
    assert not again.created and again.memory.pk == first.memory.pk
    assert again.duplicate_of.pk == first.memory.pk
    assert Memory.objects.in_namespace(namespace).count() == 1


def test_identical_content_in_another_namespace_is_a_new_memory(namespace, other_namespace):
    memory_create(namespace=namespace, content="Use UTC everywhere")
    other = memory_create(namespace=other_namespace, content="Use UTC everywhere")
    assert other.created


def test_near_duplicate_is_reported_and_can_supersede(namespace):
    old = memory_create(namespace=namespace, content="The staging database runs on port 5433.")
    near = memory_create(namespace=namespace, content="The staging database runs on port 5433")
    assert near.created
    assert near.near_duplicates[0]["id"] == str(old.memory.pk)
    assert near.near_duplicates[0]["similarity"] >= 0.95

    linked = memory_create(
        namespace=namespace,
        content="the staging database runs on port 5433 !",
        on_duplicate="supersede",
    )
    assert CausalEdge.objects.filter(
        source=linked.memory, target=old.memory, relation="supersedes"
    ).exists()

    skipped = memory_create(
        namespace=namespace, content="The staging database runs on port 5433!!", on_duplicate="skip"
    )
    assert not skipped.created and skipped.near_duplicates
    assert Memory.objects.in_namespace(namespace).count() == 3


def test_unrelated_content_is_not_a_near_duplicate(namespace):
    memory_create(namespace=namespace, content="The staging database runs on port 5433.")
    other = memory_create(namespace=namespace, content="Lunch is served at noon on Fridays.")
    assert other.near_duplicates == []


@pytest.mark.parametrize(
    "fields, bad_field",
    [
        ({"content": ""}, "content"),
        ({"content": "   "}, "content"),
        ({"content": "ok", "category": "gossip"}, "category"),
        ({"content": "ok", "tier": "legendary"}, "tier"),
        ({"content": "ok", "importance": 3}, "importance"),
        ({"content": "ok", "created_at": "last tuesday-ish"}, "created_at"),
        ({"content": "ok", "tags": "not-a-list"}, "tags"),
        ({"content": "ok", "tags": ["has space!"]}, "tags[0]"),
        ({"content": "x" * 100_001}, "content"),
        ({"content": "ok", "colour": "red"}, "colour"),
    ],
)
def test_bad_input_names_the_field_and_writes_nothing(namespace, fields, bad_field):
    with pytest.raises(ValidationFailed) as caught:
        memory_create(namespace=namespace, **fields)
    assert bad_field in caught.value.errors
    assert Memory.objects.count() == 0


def test_batch_is_all_or_nothing_and_names_the_bad_item(namespace):
    items = [{"content": f"memory number {i}"} for i in range(5)]
    items[3] = {"content": "fine", "category": "unknown"}
    with pytest.raises(ValidationFailed) as caught:
        memory_batch_create(namespace=namespace, items=items)
    assert list(caught.value.errors) == ["items[3].category"]
    assert Memory.objects.count() == 0


def test_batch_failure_in_the_database_rolls_back_everything(namespace):
    memory_batch_create(namespace=namespace, items=[{"id": "fixed-id", "content": "first"}])
    items = [{"content": "new one"}, {"id": "fixed-id", "content": "clashes with an id"}]
    with pytest.raises(ValidationFailed) as caught:
        memory_batch_create(namespace=namespace, items=items, dedupe=False)
    assert "id" in caught.value.errors
    assert list(Memory.objects.values_list("content", flat=True)) == ["first"]


def test_batch_creates_every_item_and_dedupes_within_the_batch(namespace):
    items = [{"content": f"Deploy step {i}: run the migration"} for i in range(30)]
    items.append({"content": "Deploy step 0: run the migration"})
    results = memory_batch_create(namespace=namespace, items=items)
    assert len(results) == 31
    assert Memory.objects.in_namespace(namespace).count() == 30
    assert results[-1].memory.pk == results[0].memory.pk and not results[-1].created


def test_long_markdown_becomes_linked_chunks(namespace):
    sections = "\n\n".join(
        f"## Part {i}\n\n" + f"Paragraph {i} explains a detail of the system. " * 12
        for i in range(6)
    )
    result = memory_create(
        namespace=namespace, title="Handbook", content=f"# Handbook\n\n{sections}"
    )
    assert len(result.chunks) > 1
    ids = [c.pk for c in result.chunks]
    assert result.memory.pk == ids[0]
    for i, chunk in enumerate(result.chunks):
        assert chunk.metadata["chunk_index"] == i
        assert chunk.metadata["document_id"] == str(ids[0])
    links = CausalEdge.objects.filter(source__in=ids, target__in=ids, relation="relates_to")
    assert links.count() == len(ids) - 1


def test_renaming_a_document_keeps_it_deduplicated_and_clashes_with_nothing(namespace):
    sections = "\n\n".join(
        f"## Part {i}\n\n" + f"Step {i} of the runbook says what to restart. " * 12
        for i in range(6)
    )
    document = f"# Runbook\n\n{sections}"
    first = memory_create(namespace=namespace, title="Runbook", content=document).memory
    # A memory whose text is exactly the first chunk's: allowed, the chunk stands for the
    # whole document.
    memory_create(namespace=namespace, content=first.content)
    renamed = memory_update(memory=first, title="Runbook (ops)")  # used to be a 400 on content
    assert renamed.title == "Runbook (ops)"
    again = memory_create(namespace=namespace, content=document)
    assert not again.created and again.memory.pk == first.pk


def test_update_reembeds_changed_content(namespace):
    memory = memory_create(namespace=namespace, content="Cats are great pets").memory
    before = np.array(memory.embedding)
    memory_update(memory=memory, content="The build server runs Debian", tags=["infra"])
    memory.refresh_from_db()
    assert float(before @ np.array(memory.embedding)) < 0.5
    assert [t.name for t in memory.tags.all()] == ["infra"]
    assert "debian" in str(memory.search_vector)


def test_edges_stay_inside_one_namespace(namespace, other_namespace):
    a = memory_create(namespace=namespace, content="Decision A").memory
    b = memory_create(namespace=namespace, content="Consequence B").memory
    foreign = memory_create(namespace=other_namespace, content="Elsewhere").memory
    edge = edge_create(source=a, target=b, relation="caused", strength=0.7)
    again = edge_create(source=a, target=b, relation="caused", strength=0.9)
    assert again.pk == edge.pk and again.strength == 0.9
    with pytest.raises(ValidationFailed) as caught:
        edge_create(source=a, target=foreign, relation="caused")
    assert "target" in caught.value.errors
    with pytest.raises(ValidationFailed) as caught:
        edge_create(source=a, target=b, relation="loves")
    assert "relation" in caught.value.errors


def test_search_vector_and_embedding_stay_in_the_row(namespace):
    """A conversation-length memory keeps its full-text vector and embedding in the heap row:
    out of line, every `@@` of the lexical stage fetched the vector from TOAST again, which
    tripled what a search cost the database (docs/benchmarks.md, issue 10)."""
    from django.db import connection

    text = (
        "Caroline said she went to the LGBTQ support group yesterday and it was powerful; "
        "the transgender stories there inspired her to keep going with her counseling plans, "
        "and she wants to adopt children one day with a loving family around them."
    )
    memory = memory_create(namespace=namespace, content=text, tags=["support", "family"]).memory
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_column_toast_chunk_id(search_vector), pg_column_toast_chunk_id(embedding),"
            " search_vector @@ 'famili'::tsquery, pg_column_size(m.*) "
            "FROM memories_memory m WHERE id = %s",
            [memory.pk],
        )
        vector_chunk, embedding_chunk, tags_indexed, row_size = cursor.fetchone()
    assert row_size > 2032  # past the TOAST threshold, so the storage choice matters
    assert vector_chunk is None and embedding_chunk is None
    assert tags_indexed  # the tags' words are still in the vector


def test_a_tagged_memory_is_written_once_with_its_tags_searchable(namespace):
    """Tags are linked before the row is inserted, so the row is not rewritten afterwards
    (a rewrite re-enters every index, the HNSW graph included) and its tags are searchable."""
    from django.db import connection

    def rows_updated():  # by this transaction (the test runs in one)
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT n_tup_upd FROM pg_stat_xact_user_tables WHERE relname = 'memories_memory'"
            )
            return cursor.fetchone()[0]

    before = rows_updated()
    results = memory_batch_create(
        namespace=namespace,
        items=[
            {"content": "The deploy runs from the release branch", "tags": ["ops", "release"]},
            {"content": "Backups are restored every Friday", "tags": ["ops"]},
        ],
    )
    assert rows_updated() == before
    ids = [str(r.memory.pk) for r in results]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id::text FROM memories_memory WHERE id = ANY(%s::uuid[]) "
            "AND search_vector @@ to_tsquery('english', 'release:B')",
            [ids],
        )
        assert [row[0] for row in cursor.fetchall()] == [ids[0]]
        cursor.execute(
            "SELECT count(*) FROM memories_memory WHERE id = ANY(%s::uuid[]) "
            "AND search_vector @@ to_tsquery('english', 'ops:B')",
            [ids],
        )
        assert cursor.fetchone()[0] == 2
