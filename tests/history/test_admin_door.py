"""Changes made in the Django admin are recorded with the admin user and the "admin" door,
including edits, inline edges, bulk actions and deletions (which go to the trash)."""

from __future__ import annotations

import pytest

from apps.history.models import Action, TrashEntry
from apps.history.selectors import revisions_for_memory
from apps.memories.models import Memory, Tag
from apps.memories.services import memory_create

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("embedding_model")]


def _form(memory, **changes):
    data = {
        "namespace": memory.namespace_id,
        "title": memory.title,
        "content": memory.content,
        "category": memory.category,
        "tier": memory.tier,
        "tags": [t.pk for t in memory.tags.all()],
        "importance": str(memory.importance),
        "file_path": memory.file_path,
        "source": memory.source,
        "trigger_phrases": "",
        "metadata": "{}",
        "edges_out-TOTAL_FORMS": "0",
        "edges_out-INITIAL_FORMS": "0",
    }
    data.update(changes)
    return data


def test_admin_edit_records_user_door_and_before_after(admin_client, admin_user, namespace):
    memory = memory_create(namespace=namespace, content="Backups run at 02:00").memory
    other = memory_create(namespace=namespace, content="Backups go to the NAS").memory
    url = f"/admin/memories/memory/{memory.pk}/change/"
    form = _form(memory, content="Backups run at 03:00", tier="core")
    form.update(
        {
            "edges_out-TOTAL_FORMS": "1",
            "edges_out-0-relation": "relates_to",
            "edges_out-0-target": str(other.pk),
            "edges_out-0-strength": "0.5",
        }
    )
    response = admin_client.post(url, form)
    assert response.status_code == 302, response.content.decode()[:3000]

    link, update = list(revisions_for_memory(memory))[:2]
    assert (update.action, update.door, update.actor_user) == (Action.UPDATE, "admin", admin_user)
    assert update.before == {"content": "Backups run at 02:00", "tier": "normal"}
    assert update.after == {"content": "Backups run at 03:00", "tier": "core"}
    assert (link.action, link.door) == (Action.LINK, "admin")
    assert revisions_for_memory(other).first().action == Action.LINK


def test_admin_delete_and_bulk_archive_are_recorded(admin_client, admin_user, namespace):
    a = memory_create(namespace=namespace, content="Keep the staging DB small").memory
    b = memory_create(namespace=namespace, content="Rotate keys every quarter").memory
    admin_client.post(
        "/admin/memories/memory/", {"action": "archive", "_selected_action": [str(a.pk)]}
    )
    assert revisions_for_memory(a).first().action == Action.ARCHIVE

    response = admin_client.post(f"/admin/memories/memory/{b.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not Memory.objects.filter(pk=b.pk).exists()
    entry = TrashEntry.objects.get(memory_id=b.pk)
    assert (entry.door, entry.deleted_by) == ("admin", admin_user.username)

    admin_client.post(
        "/admin/history/trashentry/", {"action": "restore", "_selected_action": [entry.pk]}
    )
    assert Memory.objects.filter(pk=b.pk).exists()
    assert revisions_for_memory(b).first().action == Action.UNDELETE


def test_renaming_or_deleting_a_tag_in_the_admin_records_each_memory(admin_client, namespace):
    memory = memory_create(namespace=namespace, content="Pin the base image", tags=["docker"])
    memory = memory.memory
    tag = Tag.objects.get(name="docker")
    response = admin_client.post(f"/admin/memories/tag/{tag.pk}/change/", {"name": "containers"})
    assert response.status_code == 302
    rev = revisions_for_memory(memory).first()
    assert (rev.door, rev.before, rev.after) == (
        "admin",
        {"tags": ["docker"]},
        {"tags": ["containers"]},
    )
    admin_client.post(f"/admin/memories/tag/{tag.pk}/delete/", {"post": "yes"})
    assert not Tag.objects.filter(pk=tag.pk).exists()
    assert revisions_for_memory(memory).first().after == {"tags": []}
