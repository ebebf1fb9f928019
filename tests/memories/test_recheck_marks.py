"""What rests on a changed memory is marked for re-check, and undoing the change clears
exactly those marks (issue 44, point 3).

Each case is a small graph of memories X, A, B, C, D: "A>X" is a `depends_on` link (A rests on
X), "X=>A" a `caused` link (X caused A), "A~X" a `relates_to` and "A!X" a `contradicts` link,
which nothing follows. X changes (superseded, deleted or its content edited); the marked
memories must be exactly `expected`, and the history's undo of the change must clear them all
while a mark another change made stays.
"""

from __future__ import annotations

import pytest

from apps.history.models import MemoryRevision, TrashEntry
from apps.history.services import revision_undo, trash_restore
from apps.memories import recheck
from apps.memories.models import CausalEdge, Memory, RecheckMark, RecheckReason, Relation
from apps.memories.revisions import Action
from apps.memories.services import (
    edge_create,
    edge_delete,
    memories_merge,
    memory_archive,
    memory_create,
    memory_delete,
    memory_update,
    supersede_undo,
)
from apps.queues.services import merge_undo
from tests import factories

pytestmark = pytest.mark.django_db

TEXTS = {
    "X": "The staging database runs Postgres 14.",
    "A": "Use the pg14 extension list when provisioning staging.",
    "B": "Runbook step 3: restore the staging dump with pg_restore from the 14 client.",
    "C": "The nightly staging refresh job pins the postgres-14 image.",
    "D": "Onboarding doc: ask for staging access, then follow the runbook.",
    "Q": "The office wifi password rotates every quarter.",
}
ARROWS = {">": (Relation.DEPENDS_ON, False), "=>": (Relation.CAUSED, False)}

GRAPHS = {
    "direct dependent": (["A>X"], "A"),
    "chain of two": (["A>B", "B>X"], "AB"),
    "chain of three": (["A>B", "B>C", "C>X"], "ABC"),
    "depth bound stops at three": (["D>A", "A>B", "B>C", "C>X"], "ABC"),
    "fan-in": (["A>X", "B>X", "C>X"], "ABC"),
    "cycle through the changed memory": (["A>X", "X>A"], "A"),
    "cycle among dependents": (["A>B", "B>A", "B>X"], "AB"),
    "shared dependent": (["A>X", "A>B", "B>X"], "AB"),
    "diamond": (["A>B", "A>C", "B>X", "C>X"], "ABC"),
    "effect of a cause": (["X=>A"], "A"),
    "dependent of an effect": (["X=>A", "B>A"], "AB"),
    "what it rests on is not marked": (["X>A", "B=>X"], ""),
    "other relations are not followed": (["A~X", "X!B", "C>D"], ""),
    "archived dependent": (["A>X", "B>X"], "B"),  # A is archived first
}
CHANGES = ("supersede", "delete", "edit")


def _edge(names: dict[str, Memory], spec: str) -> CausalEdge:
    for arrow, relation in (
        ("=>", Relation.CAUSED),
        (">", Relation.DEPENDS_ON),
        ("~", Relation.RELATES_TO),
        ("!", Relation.CONTRADICTS),
    ):
        if arrow in spec:
            left, right = spec.split(arrow)
            return CausalEdge(
                namespace_id=names[left].namespace_id,
                source=names[left],
                target=names[right],
                relation=relation,
            )
    raise AssertionError(spec)


def _marked(namespace) -> set[str]:
    return set(
        RecheckMark.objects.filter(namespace=namespace).values_list("memory__content", flat=True)
    )


def _change(kind: str, namespace, x: Memory) -> None:
    if kind == "supersede":
        memory_create(
            namespace=namespace,
            content="The staging database runs Postgres 16.",
            supersedes=[str(x.pk)],
        )
    elif kind == "delete":
        memory_delete(memory=x, door="rest")
    else:
        memory_update(memory=x, content="The staging database runs Postgres 15.", door="rest")


def _undo(kind: str, x: Memory) -> None:
    if kind == "supersede":
        revision = MemoryRevision.objects.get(memory_id=x.pk, action=Action.SUPERSEDE)
        supersede_undo(revision=revision, door="ui")
    elif kind == "delete":
        trash_restore(entry=TrashEntry.objects.get(memory_id=x.pk), door="ui")
    else:
        revision = MemoryRevision.objects.filter(memory_id=x.pk, action=Action.UPDATE).latest("id")
        revision_undo(revision=revision, door="ui")


@pytest.mark.parametrize("kind", CHANGES)
@pytest.mark.parametrize("graph", list(GRAPHS))
def test_marks_exactly_the_dependents_and_undo_clears_them(graph, kind, namespace, embedding_model):
    edges, expected = GRAPHS[graph]
    rows = factories.memories(namespace, list(TEXTS.values()))
    names = dict(zip(TEXTS, rows, strict=True))
    CausalEdge.objects.bulk_create([_edge(names, spec) for spec in edges])
    if graph == "archived dependent":
        memory_archive(memory=names["A"])
    # A mark another change made earlier: the change and its undo leave it alone.
    RecheckMark.objects.create(
        namespace=namespace, memory=names["Q"], basis_id=names["D"].pk, reason="edited"
    )

    _change(kind, namespace, names["X"])

    assert _marked(namespace) == {TEXTS[n] for n in expected} | {TEXTS["Q"]}
    reason = {"supersede": "superseded", "delete": "deleted", "edit": "edited"}[kind]
    for mark in RecheckMark.objects.exclude(memory=names["Q"]):
        assert (mark.basis_id, mark.reason) == (names["X"].pk, reason)

    _undo(kind, names["X"])

    assert _marked(namespace) == {TEXTS["Q"]}


def test_a_second_edit_keeps_the_first_mark_and_undoing_both_clears_it(namespace, embedding_model):
    x, a = factories.memories(namespace, [TEXTS["X"], TEXTS["A"]])
    CausalEdge.objects.create(namespace=namespace, source=a, target=x, relation="depends_on")
    memory_update(memory=x, content="The staging database runs Postgres 15.")
    memory_update(memory=Memory.objects.get(pk=x.pk), content="Staging runs Postgres 16.")
    assert _marked(namespace) == {TEXTS["A"]}
    later, earlier = MemoryRevision.objects.filter(memory_id=x.pk, action=Action.UPDATE).order_by(
        "-id"
    )[:2]
    revision_undo(revision=later, door="ui")
    assert _marked(namespace) == {TEXTS["A"]}  # still not the text A was written against
    revision_undo(revision=earlier, door="ui")
    assert _marked(namespace) == set()


def test_a_title_change_marks_nothing(namespace, embedding_model):
    x, a = factories.memories(namespace, [TEXTS["X"], TEXTS["A"]])
    CausalEdge.objects.create(namespace=namespace, source=a, target=x, relation="depends_on")
    memory_update(memory=x, title="Staging database")
    assert _marked(namespace) == set()


def test_a_mark_names_its_basis_reason_and_date(namespace, embedding_model):
    x, a = factories.memories(namespace, [TEXTS["X"], TEXTS["A"]])
    CausalEdge.objects.create(namespace=namespace, source=a, target=x, relation="depends_on")
    memory_delete(memory=x)
    mark = RecheckMark.objects.get(memory=a)
    assert mark.reason == RecheckReason.DELETED
    assert mark.basis_title == TEXTS["X"]
    assert mark.marked_at is not None


@pytest.mark.parametrize("change", ["delete", "edit"])
def test_no_dependents_costs_one_query(
    change, namespace, embedding_model, django_assert_num_queries
):
    """The marking adds one indexed statement to a change of a memory nothing rests on (an
    edit's statement also takes back the marks its new text undoes)."""
    (x,) = factories.memories(namespace, [TEXTS["X"]])
    with django_assert_num_queries(1):
        if change == "delete":
            assert recheck.mark([recheck.deleted(x)]) == []
        else:
            assert recheck.mark_edit(x, "an earlier hash") == []


def test_the_successor_is_not_marked_and_unlinking_clears(namespace, embedding_model):
    """A memory that rests on the one it then replaces is the change, not affected by it."""
    x, newer, a = factories.memories(
        namespace, [TEXTS["X"], "Staging moves to Postgres 16 next week.", TEXTS["A"]]
    )
    CausalEdge.objects.bulk_create(
        [
            CausalEdge(namespace=namespace, source=newer, target=x, relation="depends_on"),
            CausalEdge(namespace=namespace, source=a, target=x, relation="depends_on"),
        ]
    )
    edge_create(source=newer, target=x, relation="supersedes")
    assert _marked(namespace) == {TEXTS["A"]}
    edge_delete(edge=CausalEdge.objects.get(source=newer, target=x, relation="supersedes"))
    assert _marked(namespace) == set()


def test_a_merge_marks_what_rested_on_the_merged_memory_and_its_undo_clears_it(
    namespace, embedding_model
):
    merged, survivor, dependent = factories.memories(
        namespace, [TEXTS["X"], "Staging database: Postgres 14 on db-2.", TEXTS["A"]]
    )
    CausalEdge.objects.bulk_create(
        [
            CausalEdge(namespace=namespace, source=dependent, target=merged, relation="depends_on"),
            CausalEdge(namespace=namespace, source=survivor, target=merged, relation="depends_on"),
        ]
    )
    memories_merge(keep=survivor, others=[merged], move_edges=True)
    assert _marked(namespace) == {TEXTS["A"]}  # the survivor is the change itself
    revision = MemoryRevision.objects.filter(memory_id=survivor.pk, action=Action.MERGE).latest(
        "id"
    )
    merge_undo(revision=revision, door="ui")
    assert _marked(namespace) == set()
