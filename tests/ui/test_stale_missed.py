"""The stale and missed-searches queues: what they list, what their actions write (each a
revision), and who may see and act (viewers read; another namespace is not found)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

from apps.access.models import NamespaceMembership, Role
from apps.history.selectors import revisions_for_memory
from apps.memories import services
from apps.memories.models import Memory
from apps.memories.selectors import stale_counts, stale_memories
from apps.search.models import QueryLog
from apps.search.selectors import missed_count, missed_dismiss, missed_groups

from .conftest import PASSWORD, make_user

pytestmark = pytest.mark.django_db


def _memory(namespace, content, *, days_old=0, **fields) -> Memory:
    memory = services.memory_create(namespace=namespace, content=content, **fields).memory
    if days_old:
        Memory.objects.filter(pk=memory.pk).update(
            created_at=timezone.now() - timedelta(days=days_old)
        )
        memory.refresh_from_db()
    return memory


@pytest.fixture
def stale_world(namespace, other_namespace, embedding_model):
    fresh = _memory(namespace, "Fresh and used note about the deploy.")
    decayed = _memory(namespace, "The staging box runs on Ubuntu 18.04.")
    Memory.objects.filter(pk=decayed.pk).update(stability=0.05)
    scratch = _memory(namespace, "Scratch: try bumping the pool size.", tier="scratch", days_old=30)
    unused = _memory(namespace, "Old note nobody searches for.", days_old=200)
    archived = _memory(namespace, "Archived and decayed.")
    Memory.objects.filter(pk=archived.pk).update(stability=0.01, archived=True)
    foreign = _memory(other_namespace, "Other namespace, decayed.")
    Memory.objects.filter(pk=foreign.pk).update(stability=0.01)
    return {
        "fresh": fresh,
        "decayed": decayed,
        "scratch": scratch,
        "unused": unused,
        "foreign": foreign,
    }


def _client(username: str, namespace=None, role=None, *, superuser=False) -> Client:
    user = make_user(username, superuser=superuser)
    if namespace is not None:
        NamespaceMembership.objects.create(user=user, namespace=namespace, role=role)
    client = Client()
    assert client.login(username=username, password=PASSWORD)
    return client


def test_stale_selector_lists_each_reason_once(namespace, stale_world):
    w = stale_world
    listed = {m.pk: m for m in stale_memories(namespace=namespace)}
    assert set(listed) == {w["decayed"].pk, w["scratch"].pk, w["unused"].pk}
    assert listed[w["decayed"].pk].is_decayed
    assert listed[w["scratch"].pk].is_scratch and not listed[w["scratch"].pk].is_decayed
    assert listed[w["unused"].pk].is_unused
    only = stale_memories(namespace=namespace, reason="scratch")
    assert [m.pk for m in only] == [w["scratch"].pk]
    counts = stale_counts(namespace=namespace)
    assert counts == {"total": 3, "decayed": 1, "scratch": 1, "unused": 1}


def test_a_recent_search_hit_keeps_an_old_memory_off_the_unused_list(namespace, stale_world):
    unused = stale_world["unused"]
    Memory.objects.filter(pk=unused.pk).update(last_accessed_at=timezone.now())
    assert unused.pk not in {m.pk for m in stale_memories(namespace=namespace, reason="unused")}


def test_an_old_conversation_turn_is_never_stale_but_an_old_note_is(namespace, stale_world):
    """A turn is what someone said then: a year without a search, or decayed stability, does
    not make it stale; the same age makes a note stale. A turn left as scratch still counts."""
    before = stale_counts(namespace=namespace)
    turn = _memory(namespace, "Caroline: I went to a support group.", days_old=400,
                   category="conversation")  # fmt: skip
    Memory.objects.filter(pk=turn.pk).update(stability=0.01)
    scratch_turn = _memory(namespace, "Mel: maybe pottery?", days_old=400,
                           category="conversation", tier="scratch")  # fmt: skip
    note = _memory(namespace, "The old build box is called hermes.", days_old=400)
    listed = {m.pk: m for m in stale_memories(namespace=namespace)}
    assert turn.pk not in listed
    assert listed[note.pk].is_unused
    assert listed[scratch_turn.pk].is_scratch and not listed[scratch_turn.pk].is_unused
    after = stale_counts(namespace=namespace)
    assert after["unused"] == before["unused"] + 1  # the note alone
    assert after["decayed"] == before["decayed"] and after["total"] == before["total"] + 2


def test_stale_actions_write_revisions(namespace, stale_world):
    w = stale_world
    editor = _client("eddie", namespace, Role.EDITOR)
    url = f"/ns/{namespace.name}/queues/stale/act/"
    page = editor.get(f"/ns/{namespace.name}/queues/stale/")
    assert page.status_code == 200 and b"staging box" in page.content
    response = editor.post(url, {"row": f"refresh:{w['decayed'].pk}"})
    assert response.status_code == 302
    decayed = Memory.objects.get(pk=w["decayed"].pk)
    assert decayed.stability == 1.0 and decayed.last_accessed_at is not None
    revision = revisions_for_memory(decayed).first()
    assert revision.door == "ui" and revision.after["stability"] == 1.0
    assert revision.before["stability"] == pytest.approx(0.05)

    editor.post(url, {"row": f"promote:{w['scratch'].pk}"})
    assert Memory.objects.get(pk=w["scratch"].pk).tier == "normal"
    assert revisions_for_memory(w["scratch"]).first().action == "tier"

    editor.post(url, {"action": "archive", "ids": [str(w["unused"].pk), str(w["foreign"].pk)]})
    assert Memory.objects.get(pk=w["unused"].pk).archived
    assert not Memory.objects.get(pk=w["foreign"].pk).archived  # another namespace: untouched
    assert revisions_for_memory(w["unused"]).first().action == "archive"
    assert stale_counts(namespace=namespace)["total"] == 0


def test_stale_bad_action_names_the_field(namespace, stale_world):
    editor = _client("eddie", namespace, Role.EDITOR)
    response = editor.post(
        f"/ns/{namespace.name}/queues/stale/act/", {"action": "explode", "ids": ["x"]}, follow=True
    )
    assert response.status_code == 200 and b"action: choose" in response.content


def test_viewer_reads_the_queues_but_cannot_act(namespace, stale_world):
    viewer = _client("vera", namespace, Role.VIEWER)
    page = viewer.get(f"/ns/{namespace.name}/queues/stale/")
    assert page.status_code == 200 and b"staging box" in page.content
    assert b'name="row"' not in page.content
    decayed = stale_world["decayed"]
    response = viewer.post(
        f"/ns/{namespace.name}/queues/stale/act/", {"row": f"archive:{decayed.pk}"}
    )
    assert response.status_code == 403
    assert not Memory.objects.get(pk=decayed.pk).archived
    assert viewer.get(f"/ns/{namespace.name}/queues/missed/").status_code == 200
    dismiss = viewer.post(f"/ns/{namespace.name}/queues/missed/dismiss/", {"keys": ["x"]})
    assert dismiss.status_code == 403


def test_another_namespace_is_not_found(namespace, other_namespace, stale_world):
    outsider = _client("oscar", other_namespace, Role.OWNER)
    for url in ("queues/stale/", "queues/missed/"):
        assert outsider.get(f"/ns/{namespace.name}/{url}").status_code == 404
    response = outsider.post(
        f"/ns/{namespace.name}/queues/stale/act/", {"row": f"archive:{stale_world['decayed'].pk}"}
    )
    assert response.status_code == 404


def _log(namespace, query: str, *, gap: bool = True, results=None, days_ago: float = 0):
    log = QueryLog.objects.create(
        namespace=namespace, query=query, evidence_gap=gap, results=results or []
    )
    if days_ago:
        QueryLog.objects.filter(pk=log.pk).update(
            created_at=timezone.now() - timedelta(days=days_ago)
        )
    return log


def test_missed_groups_cluster_similar_queries_most_missed_first(namespace, embedding_model):
    for _ in range(3):
        _log(namespace, "how do we deploy to production")
    _log(namespace, "How do we deploy to production?")
    _log(namespace, "deploying to production steps")
    _log(namespace, "what is the wifi password")
    _log(namespace, "who owns the billing service", gap=False)  # zero results: missed
    _log(namespace, "found fine", gap=False, results=[{"id": "x", "score": 1.0}])
    _log(namespace, "ancient miss", days_ago=400)  # outside the window
    groups = missed_groups(namespace=namespace)
    leads = [g.lead for g in groups]
    assert "found fine" not in leads and "ancient miss" not in leads
    top = groups[0]
    assert top.misses == 5
    assert {q["key"] for q in top.queries} == {
        "how do we deploy to production",
        "how do we deploy to production?",
        "deploying to production steps",
    }
    assert {"what is the wifi password", "who owns the billing service"} <= set(leads)
    assert missed_count(namespace=namespace) == 5


def test_a_query_answered_later_leaves_the_queue(namespace, embedding_model):
    _log(namespace, "backup schedule", days_ago=1)
    assert missed_count(namespace=namespace) == 1
    _log(namespace, "Backup schedule", gap=False, results=[{"id": "x", "score": 1.0}])
    assert missed_count(namespace=namespace) == 0


def test_dismissed_group_does_not_come_back(namespace, embedding_model):
    _log(namespace, "what is the wifi password")
    _log(namespace, "office wifi password please")
    editor = _client("eddie", namespace, Role.EDITOR)
    page = editor.get(f"/ns/{namespace.name}/queues/missed/")
    assert b"wifi password" in page.content
    keys = [k for g in missed_groups(namespace=namespace) for k in g.keys]
    response = editor.post(f"/ns/{namespace.name}/queues/missed/dismiss/", {"keys": keys})
    assert response.status_code == 302
    _log(namespace, "What is the wifi password")  # asked again: still dismissed
    assert missed_groups(namespace=namespace) == []
    assert missed_dismiss(namespace=namespace, keys=keys) == 0  # idempotent


def test_write_link_prefills_the_create_form(namespace, embedding_model):
    _log(namespace, "where do the nightly backups go")
    editor = _client("eddie", namespace, Role.EDITOR)
    page = editor.get(f"/ns/{namespace.name}/queues/missed/").content.decode()
    assert "/memories/new/?content=where+do+the+nightly+backups+go" in page
    form = editor.get(f"/ns/{namespace.name}/memories/new/?content=where+do+the+nightly+backups+go")
    assert "where do the nightly backups go</textarea>" in form.content.decode()


def test_navigation_shows_queue_counts(namespace, stale_world):
    cache.clear()
    _log(namespace, "what is the wifi password")
    editor = _client("eddie", namespace, Role.EDITOR)
    html = editor.get(f"/ns/{namespace.name}/memories/").content.decode()
    assert 'id="nav-stale-count">3<' in html
    assert 'id="nav-missed-count">1<' in html
    # The queue's own action shows at once in the count (the cached figure is dropped).
    editor.post(
        f"/ns/{namespace.name}/queues/stale/act/", {"row": f"archive:{stale_world['unused'].pk}"}
    )
    html = editor.get(f"/ns/{namespace.name}/memories/").content.decode()
    assert 'id="nav-stale-count">2<' in html


def test_stale_bench_command_times_both_queues(db, embedding_model, settings):
    from io import StringIO

    from django.core.management import call_command

    settings.ALLOWED_HOSTS = list(settings.ALLOWED_HOSTS)
    out = StringIO()
    call_command("stale_bench", size=300, logs=400, repeat=1, stdout=out)
    report = out.getvalue()
    assert "300 memories, 400 searches" in report
    pages = ("near-duplicates queue", "conflicts queue", "stale queue (all reasons)")
    for page in (*pages, "missed searches (again)", "unused, page 2"):
        assert page in report


def test_demo_namespace_has_non_empty_queues(tmp_path, embedding_model, settings):
    import json

    settings.SEARCH_QUERYLOG_SYNC = True  # the test's transaction never commits

    from django.core.management import call_command

    line = {"id": "c:1", "namespace": "c", "content": "Ann: I adopted a cat.",
            "created_at": "2023-05-08T13:56:00"}  # fmt: skip
    (tmp_path / "memories.jsonl").write_text(json.dumps(line))
    call_command("seed_demo", source=str(tmp_path), conversation="c")
    demo = Memory.objects.get(content__startswith="Scratch: try a bigger").namespace
    counts = stale_counts(namespace=demo)
    # The old project note is unused; the 2023 conversation turn is a record, not stale.
    assert counts == {"total": 2, "decayed": 0, "scratch": 1, "unused": 1}
    groups = missed_groups(namespace=demo)
    assert groups, "the demo's unanswerable questions should be in the missed queue"
    assert any(len(g.queries) == 2 and "wifi" in g.lead for g in groups)
