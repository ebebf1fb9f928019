"""The near-duplicates and conflicts queues through the server: what they list, what each
action writes (revisions, undoable from history), that decided pairs stay decided, who may act
(viewers read, another namespace is not found), the navigation counts and the query counts."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.test import Client

from apps.access.models import NamespaceMembership, Role
from apps.history.selectors import revisions_for_memory
from apps.memories import services
from apps.memories.models import CausalEdge, Memory, Relation
from apps.queues.jobs import near_duplicates_update
from apps.queues.models import ConflictDecision, DuplicatePair, PairStatus
from apps.queues.selectors import conflict_count, duplicate_count, open_conflicts
from apps.search.models import QueryLog
from apps.search.services import search
from tests.factories import bare_memories

from .conftest import PASSWORD, make_user

pytestmark = pytest.mark.django_db

TUESDAY = "We deploy the web app to production every Tuesday afternoon."
TUESDAYS = "We deploy the web app to production on Tuesday afternoons."


@pytest.fixture
def world(namespace, other_namespace, embedding_model, settings):
    settings.SEARCH_QUERYLOG_SYNC = True
    cache.clear()
    a = services.memory_create(namespace=namespace, content=TUESDAY, tags=["deploy"]).memory
    b = services.memory_create(namespace=namespace, content=TUESDAYS, tags=["release"]).memory
    third = services.memory_create(namespace=namespace, content="The release checklist.").memory
    services.edge_create(source=b, target=third, relation="depends_on")
    near_duplicates_update(namespace)
    redis = services.memory_create(namespace=namespace, content="Sessions live in Redis.").memory
    pg = services.memory_create(namespace=namespace, content="Sessions live in Postgres.").memory
    services.edge_create(source=pg, target=redis, relation="contradicts")
    services.memory_create(namespace=other_namespace, content="Other namespace note.")
    return {"a": a, "b": b, "third": third, "redis": redis, "pg": pg}


def _client(username, namespace=None, role=None, *, superuser=False) -> Client:
    user = make_user(username, superuser=superuser)
    if namespace is not None:
        NamespaceMembership.objects.create(user=user, namespace=namespace, role=role)
    client = Client()
    assert client.login(username=username, password=PASSWORD)
    return client


def _pair(namespace) -> DuplicatePair:
    return DuplicatePair.objects.get(namespace=namespace)


def test_the_job_finds_the_pair_and_the_page_shows_it_side_by_side(namespace, world):
    pair = _pair(namespace)
    assert {pair.first_id, pair.second_id} == {world["a"].pk, world["b"].pk}
    editor = _client("ed", namespace, Role.EDITOR)
    html = editor.get(f"/ns/{namespace.name}/queues/duplicates/").content.decode()
    assert f'data-pair="{pair.pk}"' in html
    assert "<del>" in html and "<ins>" in html  # the word-level diff
    assert "Merge, keep left" in html


def test_merge_moves_links_records_revisions_and_undo_puts_everything_back(namespace, world):
    a, b, third = world["a"], world["b"], world["third"]
    pair = _pair(namespace)
    editor = _client("ed", namespace, Role.EDITOR)
    response = editor.post(
        f"/ns/{namespace.name}/queues/duplicates/act/", {"pair": pair.pk, "do": f"merge:{a.pk}"}
    )
    assert response.status_code == 302
    b.refresh_from_db()
    assert b.archived
    assert CausalEdge.objects.filter(source=a, target=b, relation=Relation.SUPERSEDES).exists()
    assert CausalEdge.objects.filter(source=a, target=third, relation="depends_on").exists()
    assert not CausalEdge.objects.filter(source=b, target=third).exists()
    assert set(a.tags.values_list("name", flat=True)) == {"deploy", "release"}
    merge = revisions_for_memory(a).first()
    assert merge.action == "merge" and merge.door == "ui" and merge.actor_label == "ed"
    assert duplicate_count(namespace=namespace) == 0

    history = editor.get(f"/memories/{a.pk}/history/").content.decode()
    assert "Undo this merge" in history
    editor.post(f"/memories/{a.pk}/revisions/{merge.pk}/undo/")
    b.refresh_from_db()
    assert not b.archived
    assert CausalEdge.objects.filter(source=b, target=third, relation="depends_on").exists()
    assert not CausalEdge.objects.filter(source=a, target=third).exists()
    assert not CausalEdge.objects.filter(source=a, target=b, relation="supersedes").exists()
    assert set(a.tags.values_list("name", flat=True)) == {"deploy"}
    assert DuplicatePair.objects.get(pk=pair.pk).status == PairStatus.OPEN
    assert revisions_for_memory(a).first().door == "ui"


def test_merge_with_a_combined_text(namespace, world):
    pair = _pair(namespace)
    editor = _client("ed", namespace, Role.EDITOR)
    combined = "We deploy to production on Tuesday afternoons (web app and workers)."
    editor.post(
        f"/ns/{namespace.name}/queues/duplicates/act/",
        {"pair": pair.pk, "action": "merge", "keep": str(world["b"].pk), "content": combined},
    )
    kept = Memory.objects.get(pk=world["b"].pk)
    assert kept.content == combined and Memory.objects.get(pk=world["a"].pk).archived
    # Undoing the merge also takes back the combined text.
    merge = revisions_for_memory(kept).filter(action="merge").first()
    editor.post(f"/memories/{kept.pk}/revisions/{merge.pk}/undo/")
    assert Memory.objects.get(pk=kept.pk).content == TUESDAYS


def test_keep_both_is_final_and_supersede_archives_the_older(namespace, world):
    pair = _pair(namespace)
    editor = _client("ed", namespace, Role.EDITOR)
    url = f"/ns/{namespace.name}/queues/duplicates/act/"
    editor.post(url, {"pair": pair.pk, "do": "keep_both:"})
    assert DuplicatePair.objects.get(pk=pair.pk).status == PairStatus.KEPT_BOTH
    near_duplicates_update(namespace)
    assert duplicate_count(namespace=namespace) == 0

    DuplicatePair.objects.filter(pk=pair.pk).update(status=PairStatus.OPEN)
    editor.post(url, {"pair": pair.pk, "do": f"supersede:{world['b'].pk}"})
    assert Memory.objects.get(pk=world["a"].pk).archived
    assert CausalEdge.objects.filter(
        source=world["b"], target=world["a"], relation="supersedes"
    ).exists()
    assert [r.action for r in revisions_for_memory(world["a"])[:2]] == ["decision", "archive"]


def test_conflicts_from_links_and_from_search_flags(namespace, world):
    listed = open_conflicts(namespace=namespace)
    assert [(c.linked, {c.first.pk, c.second.pk}) for c in listed] == [
        (True, {world["redis"].pk, world["pg"].pk})
    ]
    # A constitutional rule and a memory that says the opposite: the search flags them when it
    # returns both, and the flag is kept on the search's log row.
    rule = services.memory_create(
        namespace=namespace, content="Never deploy on Fridays.", tier="constitutional"
    ).memory
    other = services.memory_create(namespace=namespace, content="Deploy on Fridays.").memory
    response = search(namespace=namespace, query="deploy on Fridays")
    assert response.flags["contradictions"]
    log = QueryLog.objects.filter(namespace=namespace).latest("created_at")
    assert log.contradictions == response.flags["contradictions"]
    flagged = [c for c in open_conflicts(namespace=namespace) if not c.linked]
    assert [{c.first.pk, c.second.pk} for c in flagged] == [{rule.pk, other.pk}]
    assert flagged[0].flagged == 1
    assert conflict_count(namespace=namespace) == 2


def test_keep_one_and_resolve_with_a_note(namespace, world):
    redis, pg = world["redis"], world["pg"]
    editor = _client("ed", namespace, Role.EDITOR)
    url = f"/ns/{namespace.name}/queues/conflicts/act/"
    ids = {"first": str(redis.pk), "second": str(pg.pk)}
    response = editor.post(url, {**ids, "do": "resolve:", "note": ""}, follow=True)
    assert "note: Say in a few words" in response.content.decode()
    assert not ConflictDecision.objects.exists()
    editor.post(url, {**ids, "do": "resolve:", "note": "Both true at different times."})
    decision = ConflictDecision.objects.get()
    assert decision.note == "Both true at different times." and decision.decided_by == "ed"
    assert conflict_count(namespace=namespace) == 0
    # A decided conflict is not open any more: acting on it again is "not found".
    assert editor.post(url, {**ids, "do": f"keep:{pg.pk}"}).status_code == 404

    decision.delete()
    editor.post(url, {**ids, "do": f"keep:{pg.pk}"})
    redis.refresh_from_db()
    assert redis.archived
    assert CausalEdge.objects.filter(source=pg, target=redis, relation="supersedes").exists()
    assert [r.action for r in revisions_for_memory(redis)[:2]] == ["decision", "archive"]


def test_viewer_reads_but_cannot_act_and_other_namespaces_are_not_found(
    namespace, other_namespace, world
):
    pair = _pair(namespace)
    viewer = _client("viewer", namespace, Role.VIEWER)
    ns = namespace.name
    for page in ("duplicates", "conflicts"):
        html = viewer.get(f"/ns/{ns}/queues/{page}/").content.decode()
        assert "Merge, keep left" not in html and "Mark resolved" not in html
    assert (
        viewer.post(
            f"/ns/{ns}/queues/duplicates/act/", {"pair": pair.pk, "do": "keep_both:"}
        ).status_code
        == 403
    )
    ids = {"first": str(world["redis"].pk), "second": str(world["pg"].pk), "do": "resolve:"}
    assert viewer.post(f"/ns/{ns}/queues/conflicts/act/", {**ids, "note": "x"}).status_code == 403
    merge_rev = revisions_for_memory(world["a"]).first()
    assert viewer.post(f"/memories/{world['a'].pk}/revisions/{merge_rev.pk}/undo/").status_code in (
        403,
        404,
    )

    stranger = _client("stranger", other_namespace, Role.OWNER)
    for url in (f"/ns/{ns}/queues/duplicates/", f"/ns/{ns}/queues/conflicts/"):
        assert stranger.get(url).status_code == 404
    assert stranger.post(f"/ns/{ns}/queues/duplicates/act/", {"pair": pair.pk}).status_code == 404
    assert stranger.post(f"/ns/{ns}/queues/conflicts/act/", {**ids, "note": "x"}).status_code == 404
    # An editor of the other namespace cannot reach this namespace's pair through its own URL.
    assert (
        stranger.post("/ns/other-ns/queues/duplicates/act/", {"pair": pair.pk}).status_code == 404
    )
    assert pair.status == PairStatus.OPEN and not ConflictDecision.objects.exists()


def test_navigation_counts_every_queue(namespace, world):
    editor = _client("ed", namespace, Role.EDITOR)
    html = editor.get(f"/ns/{namespace.name}/memories/").content.decode()
    assert 'id="nav-duplicates-count">1<' in html
    assert 'id="nav-conflicts-count">1<' in html
    assert 'id="nav-stale-count">' in html and 'id="nav-missed-count">' in html


QUEUE_PAGES = [  # the pairs and conflicts pages count what waits for their pager (one query)
    ("duplicates", "/ns/test-ns/queues/duplicates/", 11),
    ("conflicts", "/ns/test-ns/queues/conflicts/", 11),
    ("stale", "/ns/test-ns/queues/stale/", 9),
    ("missed", "/ns/test-ns/queues/missed/", 10),  # + the dismissed list
]


@pytest.mark.parametrize("name,url,limit", QUEUE_PAGES, ids=[p[0] for p in QUEUE_PAGES])
def test_queue_page_query_count(namespace, world, django_assert_max_num_queries, name, url, limit):
    # More of everything must not cost more queries: 6 more pairs and 6 more conflicts.
    for i in range(6):
        x = services.memory_create(namespace=namespace, content=f"Pair note {i} left.").memory
        y = services.memory_create(namespace=namespace, content=f"Pair note {i} right.").memory
        first, second = sorted([x, y], key=lambda m: str(m.pk))
        DuplicatePair.objects.create(
            namespace=namespace, first=first, second=second, similarity=0.96
        )
        services.edge_create(source=x, target=y, relation="contradicts")
        search(namespace=namespace, query=f"unknown question number {i}")
    client = _client("root", superuser=True)
    client.get(url)
    with django_assert_max_num_queries(limit):
        response = client.get(url)
    assert response.status_code == 200


def test_both_queues_page_through_what_waits(namespace):
    memories = bare_memories(namespace, 100, lambda i: {"content": f"Note number {i}."})
    pairs = [sorted(memories[i : i + 2], key=lambda m: m.pk) for i in range(0, 50, 2)]
    DuplicatePair.objects.bulk_create(
        DuplicatePair(namespace=namespace, first=a, second=b, similarity=0.99 - n / 1000)
        for n, (a, b) in enumerate(pairs)
    )
    CausalEdge.objects.bulk_create(
        CausalEdge(namespace=namespace, source=a, target=b, relation=Relation.CONTRADICTS)
        for a, b in (memories[i : i + 2] for i in range(50, 100, 2))
    )
    viewer = _client("vi", namespace, Role.VIEWER)
    for queue, marker in [("duplicates", "data-pair="), ("conflicts", "data-first=")]:
        url = f"/ns/{namespace.name}/queues/{queue}/"
        first = viewer.get(url).content.decode()
        assert "Page 1 of 2" in first and "?page=2" in first and "Previous" not in first
        second = viewer.get(url, {"page": 2}).content.decode()
        assert "Page 2 of 2" in second and "?page=1" in second and "Next" not in second
        assert (first.count(marker), second.count(marker)) == (20, 5)  # every one, once
        assert "Page 1 of 2" in viewer.get(url, {"page": "two"}).content.decode()
        assert "Page 2 of 2" in viewer.get(url, {"page": 99}).content.decode()
