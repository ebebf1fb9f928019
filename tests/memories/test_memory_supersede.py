"""Validity on write: `supersedes` ends the older memory where the newer begins, with a link and
a revision that one undo takes back; possible updates are noticed and queued, never applied."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from apps.core.exceptions import ValidationFailed
from apps.history.models import MemoryRevision
from apps.memories.models import CausalEdge, Memory, PossibleUpdate, Relation
from apps.memories.revisions import Action
from apps.memories.services import (
    edge_create,
    edge_delete,
    memory_batch_create,
    memory_create,
    memory_update,
    supersede_undo,
)
from apps.transfer.exporting import export_records
from apps.transfer.transfer import import_records

pytestmark = pytest.mark.django_db

JUNE = datetime(2025, 6, 1, tzinfo=UTC)


def _jenkins(namespace):
    return memory_create(
        namespace=namespace, content="Our CI runs on Jenkins.", created_at="2025-03-01"
    ).memory


def test_supersedes_ends_validity_links_and_records(namespace, embedding_model):
    old = _jenkins(namespace)
    result = memory_create(
        namespace=namespace,
        content="CI was migrated from Jenkins to GitHub Actions.",
        created_at="2025-06-01",
        supersedes=[str(old.pk)],
    )
    old.refresh_from_db()
    assert old.valid_until == JUNE
    assert result.to_dict()["supersedes"] == [str(old.pk)]
    assert result.to_dict()["valid_from"] == JUNE.isoformat()
    assert CausalEdge.objects.filter(
        source=result.memory, target=old, relation=Relation.SUPERSEDES
    ).exists()
    revision = MemoryRevision.objects.get(memory_id=old.pk, action=Action.SUPERSEDE)
    assert revision.before == {"valid_until": None}
    assert revision.after["superseded_by"] == str(result.memory.pk)


def test_undo_reopens_the_old_fact_and_drops_the_link(namespace, embedding_model):
    old = _jenkins(namespace)
    new = memory_create(
        namespace=namespace,
        content="CI moved to GitHub Actions.",
        created_at="2025-06-01",
        supersedes=[str(old.pk)],
    ).memory
    revision = MemoryRevision.objects.get(memory_id=old.pk, action=Action.SUPERSEDE)
    supersede_undo(revision=revision, door="ui")
    old.refresh_from_db()
    assert old.valid_until is None
    assert not CausalEdge.objects.filter(source=new, target=old).exists()
    with pytest.raises(ValidationFailed):  # already undone
        supersede_undo(revision=revision, door="ui")


def test_a_supersedes_link_from_any_door_ends_validity_and_unlinking_reopens(
    namespace, embedding_model
):
    old = _jenkins(namespace)
    new = memory_create(namespace=namespace, content="CI runs on Buildkite now.").memory
    edge = edge_create(source=new, target=old, relation=Relation.SUPERSEDES, door="rest")
    old.refresh_from_db()
    assert old.valid_until == new.created_at
    edge_delete(edge=edge, door="rest")
    old.refresh_from_db()
    assert old.valid_until is None


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"supersedes": ["7a1b6a52-0000-4000-8000-000000000000"]}, "supersedes[0]"),
        ({"supersedes": ["no-such-external-id"]}, "supersedes[0]"),
        ({"valid_from": "2025-05-01", "valid_until": "2025-01-01"}, "valid_until"),
        ({"valid_from": "not a date"}, "valid_from"),
    ],
)
def test_bad_validity_input_names_the_field_and_writes_nothing(
    namespace, embedding_model, fields, field
):
    before = Memory.objects.count()
    with pytest.raises(ValidationFailed) as caught:
        memory_create(namespace=namespace, content="Deploys need two approvals.", **fields)
    assert field in caught.value.errors
    assert Memory.objects.count() == before


def test_cannot_supersede_a_memory_of_another_namespace(
    namespace, other_namespace, embedding_model
):
    foreign = _jenkins(other_namespace)
    with pytest.raises(ValidationFailed) as caught:
        memory_batch_create(
            namespace=namespace,
            items=[{"content": "CI is GitHub Actions.", "supersedes": [str(foreign.pk)]}],
        )
    assert "items[0].supersedes[0]" in caught.value.errors
    foreign.refresh_from_db()
    assert foreign.valid_until is None


def test_valid_until_is_editable_and_undoable_like_any_field(namespace, embedding_model):
    memory = _jenkins(namespace)
    memory_update(memory=memory, valid_until="2025-09-01", door="ui")
    memory.refresh_from_db()
    assert memory.valid_until == datetime(2025, 9, 1, tzinfo=UTC)
    revision = MemoryRevision.objects.filter(memory_id=memory.pk).latest("pk")
    assert revision.after == {"valid_until": "2025-09-01T00:00:00+00:00"}
    memory_update(memory=memory, valid_from="2025-03-01", door="ui")
    with pytest.raises(ValidationFailed) as caught:
        memory_update(memory=memory, valid_until="2025-01-01", door="ui")
    assert "valid_until" in caught.value.errors


def test_an_update_is_noticed_and_queued_not_applied(namespace, embedding_model):
    old = memory_create(
        namespace=namespace, content="The production database is PostgreSQL 14."
    ).memory
    memory_create(namespace=namespace, content="Backups of the database run nightly.")
    result = memory_create(
        namespace=namespace, content="We upgraded the production database to PostgreSQL 16."
    )
    named = [u["id"] for u in result.to_dict()["possible_updates"]]
    assert named == [str(old.pk)]
    assert "14 -> 16" in result.possible_updates[0]["why"]
    old.refresh_from_db()
    assert old.valid_until is None  # never superseded silently
    assert PossibleUpdate.objects.filter(newer=result.memory, older=old).exists()


def test_related_facts_that_both_hold_are_not_called_updates(namespace, embedding_model):
    memory_create(namespace=namespace, content="Alice leads the payments team.")
    result = memory_create(
        namespace=namespace, content="Alice also mentors the two new backend hires."
    )
    assert result.possible_updates == []


def test_storing_the_same_text_again_with_supersedes_confirms_the_update(
    namespace, embedding_model
):
    old = _jenkins(namespace)
    text = "CI was migrated from Jenkins to GitHub Actions."
    first = memory_create(namespace=namespace, content=text, created_at="2025-06-01")
    assert [u["id"] for u in first.possible_updates] == [str(old.pk)]
    again = memory_create(namespace=namespace, content=text, supersedes=[str(old.pk)])
    assert again.created is False and again.superseded == [str(old.pk)]
    old.refresh_from_db()
    assert old.valid_until == JUNE


def test_import_keeps_validity_and_takes_supersedes(namespace, embedding_model):
    old = _jenkins(namespace)
    import_records(
        [
            {
                "id": "ci-2025",
                "namespace": namespace.name,
                "content": "CI runs on GitHub Actions.",
                "created_at": "2025-06-01",
                "valid_from": "2025-05-20",
                "supersedes": [str(old.pk)],
            }
        ],
        progress=False,
    )
    old.refresh_from_db()
    assert old.valid_until == datetime(2025, 5, 20, tzinfo=UTC)
    records = {r["id"]: r for r in export_records([namespace.name])}
    assert records[str(old.pk)]["valid_until"].startswith("2025-05-20")
    assert records["ci-2025"]["valid_from"].startswith("2025-05-20")
