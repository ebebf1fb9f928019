"""The Django admin: every model is listed and searchable; writes go through the write path."""

import pytest

from apps.memories.models import CausalEdge, Memory
from apps.memories.services import edge_create, memory_create

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("embedding_model")]

CHANGELISTS = [
    "/admin/memories/memory/",
    "/admin/memories/namespace/",
    "/admin/memories/tag/",
    "/admin/memories/causaledge/",
    "/admin/search/querylog/",
    "/admin/search/strategyweights/",
    "/admin/access/apitoken/",
    "/admin/jobs/jobrun/",
]


@pytest.fixture
def memories(namespace):
    a = memory_create(namespace=namespace, content="Fix the flaky deploy", tags=["ops"]).memory
    b = memory_create(namespace=namespace, content="Deploys now wait for health checks").memory
    edge_create(source=a, target=b, relation="caused")
    return a, b


@pytest.mark.parametrize("url", CHANGELISTS)
def test_every_changelist_loads_with_search_and_filters(admin_client, memories, url):
    response = admin_client.get(url, {"q": "deploy"})
    assert response.status_code == 200


def test_memory_list_shows_columns_and_finds_by_content(admin_client, memories):
    page = admin_client.get("/admin/memories/memory/", {"q": "flaky"}).content.decode()
    assert "Fix the flaky deploy" in page and "Deploys now wait" not in page
    assert "bugfix" in page and "ops" in page  # tag column, inferred tag included


def test_bulk_archive(admin_client, memories):
    response = admin_client.post(
        "/admin/memories/memory/",
        {"action": "archive", "_selected_action": [str(m.pk) for m in memories]},
    )
    assert response.status_code == 302
    assert Memory.objects.filter(archived=True).count() == 2


def test_adding_in_the_admin_embeds_and_infers_tags(admin_client, namespace):
    response = admin_client.post(
        "/admin/memories/memory/add/",
        {
            "namespace": namespace.pk,
            "title": "",
            "content": "Avoid the slow path in the importer",
            "category": "warning",
            "tier": "normal",
            "importance": "0.7",
            "file_path": "",
            "source": "admin",
            "trigger_phrases": "",
            "metadata": "{}",
            "edges_out-TOTAL_FORMS": "0",
            "edges_out-INITIAL_FORMS": "0",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    memory = Memory.objects.get(source="admin")
    assert memory.embedding is not None
    assert {"perf", "warning"} <= {t.name for t in memory.tags.all()}


def test_bad_input_in_the_admin_names_the_field(admin_client, namespace):
    response = admin_client.post(
        "/admin/memories/memory/add/",
        {
            "namespace": namespace.pk,
            "content": "x",
            "category": "note",
            "tier": "normal",
            "importance": "7",
            "metadata": "{}",
            "edges_out-TOTAL_FORMS": "0",
            "edges_out-INITIAL_FORMS": "0",
        },
    )
    assert response.status_code == 200
    assert "outside 0..1" in response.content.decode()
    assert not Memory.objects.exists()


def test_merge_action_supersedes_and_archives(admin_client, memories):
    older, newer = memories
    admin_client.post(
        "/admin/memories/memory/",
        {"action": "merge", "_selected_action": [str(older.pk), str(newer.pk)]},
    )
    newer.refresh_from_db()
    assert newer.archived
    assert CausalEdge.objects.filter(source=older, target=newer, relation="supersedes").exists()
