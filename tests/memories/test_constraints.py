"""The database itself keeps data sane, whatever path writes to it."""

import pytest
from django.db import IntegrityError, transaction

from apps.memories.models import CausalEdge, Memory, Tag


def _memory(namespace, content="a memory", **fields):
    return Memory.objects.create(
        namespace=namespace, content=content, content_hash=content, **fields
    )


def _refused(**fields):
    with pytest.raises(IntegrityError), transaction.atomic():
        CausalEdge.objects.create(**fields)


@pytest.mark.django_db
def test_edges_are_unique_per_relation_and_never_self(namespace):
    a, b = _memory(namespace, "a"), _memory(namespace, "b")
    CausalEdge.objects.create(namespace=namespace, source=a, target=b, relation="caused")
    _refused(namespace=namespace, source=a, target=b, relation="caused")
    _refused(namespace=namespace, source=a, target=a, relation="relates_to")
    CausalEdge.objects.create(namespace=namespace, source=a, target=b, relation="supersedes")
    assert CausalEdge.objects.count() == 2


@pytest.mark.django_db
def test_both_ends_of_an_edge_live_in_the_edge_namespace(namespace, other_namespace):
    a, foreign = _memory(namespace, "a"), _memory(other_namespace, "b")
    _refused(namespace=namespace, source=a, target=foreign, relation="caused")
    _refused(namespace=other_namespace, source=a, target=foreign, relation="caused")


@pytest.mark.django_db
@pytest.mark.parametrize(
    "fields",
    [
        {"importance": 1.5},
        {"importance": -0.1},
        {"stability": 2.0},
        {"pagerank_score": -1.0},
        {"category": "gossip"},
        {"tier": "legendary"},
        {"content": ""},
    ],
)
def test_memory_scores_and_choices_stay_in_range(namespace, fields):
    with pytest.raises(IntegrityError), transaction.atomic():
        _memory(namespace, **{"content": "x", **fields})


@pytest.mark.django_db
def test_edge_strength_stays_within_0_and_1(namespace):
    a, b = _memory(namespace, "a"), _memory(namespace, "b")
    _refused(namespace=namespace, source=a, target=b, relation="caused", strength=1.2)


@pytest.mark.django_db
def test_search_vector_is_kept_by_the_database(namespace):
    memory = _memory(namespace, "the deployment pipeline", title="Release checklist")
    memory.tags.add(Tag.objects.create(name="tech-debt"))
    memory.refresh_from_db()
    vector = str(memory.search_vector)
    assert "'releas':1A" in vector and "'debt'" in vector and "'pipelin':7C" in vector
    Memory.objects.filter(pk=memory.pk).update(title="Rollback plan")
    memory.refresh_from_db()
    assert "'rollback':1A" in str(memory.search_vector) and "releas" not in str(
        memory.search_vector
    )
    memory.tags.clear()
    memory.refresh_from_db()
    assert "debt" not in str(memory.search_vector)
