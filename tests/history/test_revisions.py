"""Every change through the write path records who, which door, and the fields before/after."""

from __future__ import annotations

import numpy as np
import pytest
from django.contrib.auth.models import User

from apps.access.services import token_create
from apps.history.models import Action, MemoryRevision
from apps.history.selectors import revisions_for_memory
from apps.history.services import revision_restore
from apps.memories.models import Memory
from apps.memories.services import (
    edge_create,
    edge_delete,
    memories_merge,
    memory_archive,
    memory_batch_create,
    memory_create,
    memory_update,
)
from apps.vectors import embeddings

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("embedding_model")]


@pytest.fixture
def alice(db):
    return User.objects.create_user("alice", password="x")


def _create(namespace, content, **fields):
    return memory_create(namespace=namespace, content=content, **fields).memory


def test_create_records_the_new_fields_and_the_actor(namespace, alice):
    memory = _create(
        namespace, "Deploys wait for health checks", tags=["ops"], actor=alice, door="ui"
    )
    [rev] = revisions_for_memory(memory)
    assert (rev.action, rev.door, rev.actor_user, rev.actor_label) == (
        Action.CREATE,
        "ui",
        alice,
        "alice",
    )
    assert rev.before is None
    assert rev.after["content"] == "Deploys wait for health checks"
    assert rev.after["tags"] == ["ops"]
    assert rev.namespace == namespace


def test_update_records_only_changed_fields_before_and_after(namespace, alice):
    memory = _create(namespace, "Use Redis for the cache", importance=0.4)
    memory_update(memory=memory, content="Use Valkey for the cache", importance=0.9, actor=alice)
    rev = revisions_for_memory(memory).first()
    assert rev.action == Action.UPDATE and rev.door == "system"
    assert rev.before == {"content": "Use Redis for the cache", "importance": 0.4}
    assert rev.after == {"content": "Use Valkey for the cache", "importance": 0.9}


def test_unchanged_update_records_nothing(namespace):
    memory = _create(namespace, "Nothing changes here")
    memory_update(memory=memory, content="Nothing changes here")
    assert revisions_for_memory(memory).count() == 1


def test_tier_change_archive_and_tags_are_named(namespace):
    memory = _create(namespace, "A scratch thought", tags=["idea"])
    memory_update(memory=memory, tier="core", door="job")
    memory_archive(memory=memory, door="rest")
    memory_update(memory=memory, tags=["idea", "kept"])
    actions = [(r.action, r.door) for r in revisions_for_memory(memory)]
    assert actions == [
        (Action.UPDATE, "system"),
        (Action.ARCHIVE, "rest"),
        (Action.TIER, "job"),
        (Action.CREATE, "system"),
    ]
    assert revisions_for_memory(memory).first().after == {"tags": ["idea", "kept"]}


def test_token_actor_label_survives_the_token_and_user_being_deleted(namespace, alice):
    token, _ = token_create(name="claude-laptop", namespaces=[namespace])
    by_token = _create(namespace, "Written by an assistant", actor=token, door="mcp")
    by_user = _create(namespace, "Written by a person", actor=alice, door="ui")
    token.delete()
    alice.delete()
    rev = revisions_for_memory(by_token).get()
    assert rev.actor_token is None and rev.actor_label.startswith("token claude-laptop")
    assert revisions_for_memory(by_user).get().actor_label == "alice"


def test_unknown_door_is_refused_and_nothing_is_written(namespace):
    with pytest.raises(ValueError):
        _create(namespace, "Through a window", door="window")
    assert not Memory.objects.exists()


def test_link_and_unlink_show_on_both_ends(namespace):
    a, b = _create(namespace, "Cause"), _create(namespace, "Effect")
    edge = edge_create(source=a, target=b, relation="caused", door="rest")
    edge_delete(edge=edge, door="rest")
    for memory in (a, b):
        unlink, link = list(revisions_for_memory(memory))[:2]
        assert (link.action, unlink.action) == (Action.LINK, Action.UNLINK)
        assert link.after["edge"]["relation"] == "caused"
        assert unlink.before["edge"]["target"] == str(b.pk)


def test_merge_records_the_tags_gained_and_the_archived_duplicates(namespace):
    keep = _create(namespace, "Deploy with blue-green", tags=["deploy"])
    dup = _create(namespace, "Blue-green deploys", tags=["release"])
    memories_merge(keep=keep, others=[dup], door="admin")
    kept = revisions_for_memory(keep).first()
    assert kept.action == Action.MERGE and kept.after["tags"] == ["deploy", "release"]
    gone = revisions_for_memory(dup).first()
    assert gone.before == {"archived": False} and gone.after["archived"] is True


def test_restore_an_old_version_is_itself_a_revision_and_re_embeds(namespace, alice):
    memory = _create(namespace, "The API listens on port 8000", title="Port")
    memory_update(memory=memory, content="The API listens on port 9000", tier="core")
    memory_update(memory=memory, title="Ports")
    created = revisions_for_memory(memory).last()

    memory = revision_restore(revision=created, actor=alice, door="ui")

    memory.refresh_from_db()
    assert (memory.content, memory.title, memory.tier) == (
        "The API listens on port 8000",
        "Port",
        "normal",
    )
    expected = embeddings.embed_texts(["Port\nThe API listens on port 8000"])[0]
    assert np.allclose(memory.embedding, expected, atol=1e-5)
    rev = revisions_for_memory(memory).first()
    assert (rev.action, rev.door, rev.actor_label) == (Action.RESTORE, "ui", "alice")
    assert rev.before["content"] == "The API listens on port 9000"
    assert rev.after["content"] == "The API listens on port 8000"
    assert revisions_for_memory(memory).count() == 4


def test_batch_create_of_200_records_200_revisions_in_bounded_queries(
    namespace, django_assert_max_num_queries
):
    items = [{"content": f"Batch memory number {i} about topic {i % 7}"} for i in range(200)]
    with django_assert_max_num_queries(20) as captured:
        results = memory_batch_create(
            namespace=namespace, items=items, check_near_duplicates=False, door="cli"
        )
    table = MemoryRevision._meta.db_table
    inserts = [
        q
        for q in captured.captured_queries
        if q["sql"].startswith((f'INSERT INTO "{table}"', f'COPY "{table}"'))
    ]
    assert len(inserts) == 1  # one statement for all 200 revisions
    assert MemoryRevision.objects.filter(action=Action.CREATE, door="cli").count() == 200
    assert {r.memory.pk for r in results} == set(
        MemoryRevision.objects.values_list("memory_id", flat=True)
    )
