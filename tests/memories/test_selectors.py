"""List and aggregate reads: scoped by the principal, filtered as asked."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import User

from apps.access.models import NamespaceMembership, Role
from apps.access.services import token_create
from apps.memories import selectors
from apps.memories.duplicate_hash import content_hash
from apps.memories.models import CausalEdge, Memory, Namespace, Tag
from apps.search.models import QueryLog
from apps.search.selectors import namespace_stats


def _memory(ns, text, *, tags=(), archived=False, day=1, category="note"):
    memory = Memory.objects.create(
        namespace=ns,
        content=text,
        content_hash=content_hash(text),
        archived=archived,
        category=category,
        created_at=datetime(2025, 1, day, tzinfo=UTC),
    )
    memory.tags.set([Tag.objects.get_or_create(name=t)[0] for t in tags])
    return memory


@pytest.fixture
def data(db):
    alpha = Namespace.objects.create(name="alpha")
    beta = Namespace.objects.create(name="beta")
    a1 = _memory(alpha, "first", tags=["x"], day=1)
    a2 = _memory(alpha, "second", tags=["y"], day=2, category="decision")
    _memory(alpha, "old", tags=["x"], archived=True, day=3)
    b1 = _memory(beta, "beta one", tags=["x", "z"], day=4)
    b2 = _memory(beta, "beta two", day=5)
    CausalEdge.objects.create(namespace=alpha, source=a1, target=a2, relation="caused")
    CausalEdge.objects.create(namespace=beta, source=b1, target=b2, relation="relates_to")
    QueryLog.objects.create(namespace=alpha, query="q", evidence_gap=True)
    viewer = User.objects.create_user("viewer")
    NamespaceMembership.objects.create(user=viewer, namespace=alpha, role=Role.VIEWER)
    editor = User.objects.create_user("editor")
    NamespaceMembership.objects.create(user=editor, namespace=alpha, role=Role.EDITOR)
    NamespaceMembership.objects.create(user=editor, namespace=beta, role=Role.VIEWER)
    return {"alpha": alpha, "beta": beta, "a1": a1, "a2": a2, "viewer": viewer, "editor": editor}


def _contents(memories) -> list[str]:
    return [m.content for m in memories]


def test_memory_list_is_scoped_then_filtered(data):
    viewer, editor = data["viewer"], data["editor"]
    assert _contents(selectors.memory_list(principal=viewer)) == ["second", "first"]
    assert _contents(selectors.memory_list(principal=editor)) == [
        "beta two",
        "beta one",
        "second",
        "first",
    ]
    assert _contents(selectors.memory_list(principal=editor, tags=["x"])) == ["beta one", "first"]
    assert _contents(selectors.memory_list(principal=viewer, archived=True)) == ["old"]
    assert _contents(selectors.memory_list(principal=viewer, category="decision")) == ["second"]
    after = datetime(2025, 1, 2, tzinfo=UTC)
    assert _contents(selectors.memory_list(principal=editor, after=after, before=None)) == [
        "beta two",
        "beta one",
        "second",
    ]
    # Naming a namespace the principal cannot see narrows to nothing, never widens.
    assert not selectors.memory_list(principal=viewer, namespace=data["beta"]).exists()


def test_edge_list_by_memory_and_relation(data):
    editor = data["editor"]
    assert selectors.edge_list(principal=editor).count() == 2
    assert selectors.edge_list(principal=data["viewer"]).count() == 1
    touching = selectors.edge_list(principal=editor, memory=data["a2"].pk)
    assert [e.relation for e in touching] == ["caused"]
    assert [e.relation for e in selectors.edge_list(principal=editor, relation="relates_to")] == [
        "relates_to"
    ]


def test_tag_counts_skip_archived(data):
    rows = list(selectors.tag_counts(namespaces=[data["alpha"]]))
    assert rows == [{"name": "x", "count": 1}, {"name": "y", "count": 1}]


def test_namespace_summaries_say_where_the_principal_may_write(data):
    summaries = selectors.namespace_summaries(principal=data["editor"])
    assert [(s.name, s.memory_count, s.writable) for s in summaries] == [
        ("alpha", 2, True),
        ("beta", 2, False),
    ]
    token = token_create(name="ro", namespaces=[data["beta"]], read_only=True)[0]
    assert [(s.name, s.writable) for s in selectors.namespace_summaries(principal=token)] == [
        ("beta", False)
    ]


def test_namespace_stats(data):
    rows = namespace_stats(namespaces=[data["alpha"], data["beta"]])
    assert rows[0] == {
        "namespace": "alpha",
        "memories": 2,
        "archived": 1,
        "tags": 2,
        "edges": 1,
        "searches": 1,
        "searches_with_feedback": 0,
        "evidence_gaps": 1,
    }
    assert rows[1]["namespace"] == "beta" and rows[1]["searches"] == 0
