"""Every action on a queue shows in the affected memory's history with an undo that works:
after the undo the pair, conflict, stale memory or missed query is back in its queue."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

from apps.access.models import NamespaceMembership, Role
from apps.history.models import TrashEntry
from apps.history.selectors import revisions_for_memory
from apps.memories import services
from apps.memories.models import CausalEdge, Memory
from apps.queues.jobs import near_duplicates_update
from apps.queues.models import DuplicatePair
from apps.search.models import QueryLog

from .conftest import PASSWORD, make_user

pytestmark = pytest.mark.django_db

TUESDAY = "We deploy the web app to production every Tuesday afternoon."
TUESDAYS = "We deploy the web app to production on Tuesday afternoons."


@pytest.fixture
def desk(namespace, embedding_model, settings):
    settings.SEARCH_QUERYLOG_SYNC = True
    cache.clear()
    a = services.memory_create(namespace=namespace, content=TUESDAY).memory
    b = services.memory_create(namespace=namespace, content=TUESDAYS).memory
    near_duplicates_update(namespace)
    redis = services.memory_create(namespace=namespace, content="Sessions live in Redis.").memory
    pg = services.memory_create(namespace=namespace, content="Sessions live in Postgres.").memory
    services.edge_create(source=pg, target=redis, relation="contradicts")
    user = make_user("curator")
    NamespaceMembership.objects.create(user=user, namespace=namespace, role=Role.EDITOR)
    client = Client()
    assert client.login(username="curator", password=PASSWORD)
    return {"client": client, "a": a, "b": b, "redis": redis, "pg": pg, "ns": namespace.name}


def _undo(client: Client, memory: Memory, label: str) -> None:
    """Press the newest undo button with `label` on the memory's history page."""
    history = client.get(f"/memories/{memory.pk}/history/").content.decode()
    assert label in history, f"no {label!r} in the history of {memory.pk}"
    for revision in revisions_for_memory(memory):
        url = f"/memories/{memory.pk}/revisions/{revision.pk}/undo/"
        at = history.find(f'action="{url}"')
        if at != -1 and label in history[at : at + 400]:
            assert client.post(url).status_code == 302
            return
    raise AssertionError(f"no undo form for {label!r}")


def _in_queue(client: Client, url: str, marker: str) -> bool:
    cache.clear()
    return marker in client.get(url).content.decode()


def _duplicates(desk) -> str:
    return f"/ns/{desk['ns']}/queues/duplicates/"


def _conflicts(desk) -> str:
    return f"/ns/{desk['ns']}/queues/conflicts/"


def _conflict_marker(desk) -> str:
    return f'data-first="{min(desk["redis"].pk, desk["pg"].pk, key=str)}"'


@pytest.mark.parametrize("side", ["a", "b"])
def test_keep_both_is_undone_from_either_memory(desk, side):
    client, pair = desk["client"], DuplicatePair.objects.get()
    client.post(_duplicates(desk) + "act/", {"pair": pair.pk, "do": "keep_both:"})
    assert not _in_queue(client, _duplicates(desk), f'data-pair="{pair.pk}"')
    for memory in (desk["a"], desk["b"]):
        assert revisions_for_memory(memory).first().action == "decision"
    _undo(client, desk[side], "Undo this decision")
    assert _in_queue(client, _duplicates(desk), f'data-pair="{pair.pk}"')
    # Undone once: no second undo button, and the undo shows in both histories.
    for memory in (desk["a"], desk["b"]):
        history = client.get(f"/memories/{memory.pk}/history/").content.decode()
        assert "Undo this decision" not in history and "back in the queue" in history


def test_merge_is_undone_and_the_pair_comes_back(desk):
    client, pair = desk["client"], DuplicatePair.objects.get()
    client.post(_duplicates(desk) + "act/", {"pair": pair.pk, "do": f"merge:{desk['a'].pk}"})
    assert Memory.objects.get(pk=desk["b"].pk).archived
    _undo(client, desk["a"], "Undo this merge")
    assert not Memory.objects.get(pk=desk["b"].pk).archived
    assert _in_queue(client, _duplicates(desk), f'data-pair="{pair.pk}"')


def test_supersede_is_undone_link_archive_and_pair(desk):
    client, pair = desk["client"], DuplicatePair.objects.get()
    a, b = desk["a"], desk["b"]
    client.post(_duplicates(desk) + "act/", {"pair": pair.pk, "do": f"supersede:{b.pk}"})
    assert Memory.objects.get(pk=a.pk).archived
    _undo(client, a, "Undo this decision")
    assert not Memory.objects.get(pk=a.pk).archived
    assert not CausalEdge.objects.filter(source=b, target=a, relation="supersedes").exists()
    assert _in_queue(client, _duplicates(desk), f'data-pair="{pair.pk}"')
    actions = [r.action for r in revisions_for_memory(a)[:4]]
    assert {"decision", "unarchive", "unlink"} <= set(actions)


def test_conflict_keep_one_is_undone(desk):
    client, redis, pg = desk["client"], desk["redis"], desk["pg"]
    client.post(
        _conflicts(desk) + "act/", {"first": redis.pk, "second": pg.pk, "do": f"keep:{pg.pk}"}
    )
    assert Memory.objects.get(pk=redis.pk).archived
    assert not _in_queue(client, _conflicts(desk), _conflict_marker(desk))
    _undo(client, redis, "Undo this decision")
    assert not Memory.objects.get(pk=redis.pk).archived
    assert not CausalEdge.objects.filter(source=pg, target=redis, relation="supersedes").exists()
    assert _in_queue(client, _conflicts(desk), _conflict_marker(desk))


def test_conflict_resolved_with_a_note_is_undone(desk):
    client, redis, pg = desk["client"], desk["redis"], desk["pg"]
    client.post(
        _conflicts(desk) + "act/",
        {"first": redis.pk, "second": pg.pk, "do": "resolve", "note": "Both: Redis caches."},
    )
    assert not _in_queue(client, _conflicts(desk), _conflict_marker(desk))
    history = client.get(f"/memories/{pg.pk}/history/").content.decode()
    assert "marked resolved (note: Both: Redis caches.)" in history
    _undo(client, pg, "Undo this decision")
    assert _in_queue(client, _conflicts(desk), _conflict_marker(desk))


def test_conflict_edit_is_undone(desk):
    client, redis = desk["client"], desk["redis"]
    services.memory_update(memory=redis, content="Sessions live in Redis (cache only).", door="ui")
    _undo(client, redis, "Undo this change")
    assert Memory.objects.get(pk=redis.pk).content == "Sessions live in Redis."
    assert _in_queue(client, _conflicts(desk), _conflict_marker(desk))


@pytest.fixture
def stale(desk, namespace):
    scratch = services.memory_create(
        namespace=namespace, content="Scratch: try a bigger pool.", tier="scratch"
    ).memory
    Memory.objects.filter(pk=scratch.pk).update(created_at=timezone.now() - timedelta(days=60))
    decayed = services.memory_create(namespace=namespace, content="Staging runs 18.04.").memory
    Memory.objects.filter(pk=decayed.pk).update(stability=0.05)
    return {"scratch": scratch, "decayed": decayed}


@pytest.mark.parametrize(
    ("action", "which", "label"),
    [
        ("archive", "decayed", "Undo this change"),
        ("promote", "scratch", "Undo this change"),
        ("refresh", "decayed", "Undo this refresh"),
    ],
)
def test_stale_actions_are_undone(desk, stale, action, which, label):
    client, memory = desk["client"], stale[which]
    url = f"/ns/{desk['ns']}/queues/stale/"
    marker = f'data-memory="{memory.pk}"'
    assert _in_queue(client, url, marker)
    client.post(url + "act/", {"row": f"{action}:{memory.pk}"})
    assert not _in_queue(client, url, marker)
    _undo(client, memory, label)
    assert _in_queue(client, url, marker)


def test_missed_write_and_dismiss_are_undone(desk, namespace):
    client = desk["client"]
    QueryLog.objects.create(
        namespace=namespace, query="where do backups go", evidence_gap=True, results=[]
    )
    url = f"/ns/{desk['ns']}/queues/missed/"
    assert _in_queue(client, url, "where do backups go")
    client.post(url + "dismiss/", {"keys": ["where do backups go"]})
    assert not _in_queue(client, url, '<b class="lead">where do backups go')
    response = client.post(url + "bring-back/", {"keys": ["where do backups go"]})
    assert response.status_code == 302
    assert _in_queue(client, url, '<b class="lead">where do backups go')

    written = services.memory_create(
        namespace=namespace, content="Backups go to the NAS nightly.", door="ui"
    ).memory
    _undo(client, written, "Undo this creation")
    assert not Memory.objects.filter(pk=written.pk).exists()
    assert TrashEntry.objects.filter(memory_id=written.pk).exists()
