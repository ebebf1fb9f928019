"""Every UI view checks the person's role on the server (apps/ui/view_permissions.py over
apps.access.permissions): viewers read, search and give feedback; editors also change; owners
also manage members and tokens; a namespace the person is not in is "not found" everywhere."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.test import Client

from apps.access.models import ApiToken, NamespaceMembership, Role
from apps.access.services import token_create
from apps.history.selectors import revisions_for_memory, trash_for_namespace
from apps.memories import services
from apps.memories.models import CausalEdge, Memory, Namespace

from .conftest import PASSWORD, make_user

pytestmark = pytest.mark.django_db


@dataclass
class World:
    acme: Namespace
    beta: Namespace
    memory: Memory  # in acme
    other: Memory  # in acme, to link to
    foreign: Memory  # in beta
    edge: CausalEdge  # in acme
    token: ApiToken  # of acme
    first_revision: int = 0  # of memory
    trash_entry: int = 0  # a deleted acme memory


@pytest.fixture
def world(db, embedding_model, settings) -> World:
    settings.SEARCH_QUERYLOG_SYNC = True
    acme = services.namespace_get_or_create(name="acme")
    beta = services.namespace_get_or_create(name="beta")
    memory = services.memory_create(
        namespace=acme, title="Deploy checklist", content="Run the deploy checklist first."
    ).memory
    other = services.memory_create(namespace=acme, content="Backups run at 02:00 UTC.").memory
    foreign = services.memory_create(
        namespace=beta, title="Beta secret plan", content="Beta's deploy happens on Fridays."
    ).memory
    edge = services.edge_create(source=memory, target=other, relation="relates_to")
    for name, role, namespace in [
        ("vera", Role.VIEWER, acme),
        ("eddie", Role.EDITOR, acme),
        ("olivia", Role.OWNER, acme),
        ("oscar", Role.OWNER, beta),
    ]:
        user = make_user(name)
        NamespaceMembership.objects.create(user=user, namespace=namespace, role=role)
    token, _ = token_create(name="acme-token", namespaces=[acme])
    world = World(acme, beta, memory, other, foreign, edge, token)
    _history(world)
    return world


def _history(world: World) -> None:
    """An edit to restore from, and a deleted memory in the trash."""
    services.memory_update(memory=world.memory, content="Run the deploy checklist first.")
    world.first_revision = revisions_for_memory(world.memory).last().pk
    doomed = services.memory_create(namespace=world.acme, content=f"Doomed {world.memory.pk}")
    services.memory_delete(memory=doomed.memory)
    world.trash_entry = trash_for_namespace(world.acme).first().pk


def client_for(username: str) -> Client:
    client = Client()
    assert client.login(username=username, password=PASSWORD)
    return client


# (description, URL from the world) -> expected status for viewer, editor, owner, outsider
GET_RULES = [
    ("search", lambda w: "/?namespace=acme&q=deploy", (200, 200, 200, 404)),
    ("explain", lambda w: "/explain/?namespace=acme&q=deploy", (200, 200, 200, 404)),
    ("browse", lambda w: "/ns/acme/memories/", (200, 200, 200, 404)),
    ("create", lambda w: "/ns/acme/memories/new/", (403, 200, 200, 404)),
    ("infer tags", lambda w: "/ns/acme/infer-tags/?content=fix", (200, 200, 200, 404)),
    ("memory", lambda w: f"/memories/{w.memory.pk}/", (200, 200, 200, 404)),
    ("edit", lambda w: f"/memories/{w.memory.pk}/edit/", (403, 200, 200, 404)),
    ("chunks", lambda w: f"/memories/{w.memory.pk}/chunks/", (200, 200, 200, 404)),
    ("similar", lambda w: f"/memories/{w.memory.pk}/similar/", (302, 302, 302, 404)),
    ("link search", lambda w: f"/memories/{w.memory.pk}/link/candidates/?q=backup",
     (403, 200, 200, 404)),
    ("connect", lambda w: "/ns/acme/connect/", (403, 403, 200, 404)),
    ("members", lambda w: "/ns/acme/members/", (403, 403, 200, 404)),
    ("history", lambda w: f"/memories/{w.memory.pk}/history/", (200, 200, 200, 404)),
    ("trash", lambda w: "/ns/acme/trash/", (200, 200, 200, 404)),
    ("graph", lambda w: "/ns/acme/graph/", (200, 200, 200, 404)),
    ("graph around a memory", lambda w: f"/ns/acme/graph/?memory={w.memory.pk}&depth=2",
     (200, 200, 200, 404)),
    ("graph data", lambda w: f"/ns/acme/graph/data/?memory={w.memory.pk}", (200, 200, 200, 404)),
    ("graph of another namespace's memory", lambda w: f"/ns/acme/graph/data/?memory={w.foreign.pk}",
     (404, 404, 404, 404)),
    ("analytics", lambda w: "/ns/acme/analytics/?days=90", (200, 200, 200, 404)),
]  # fmt: skip
PEOPLE = ("vera", "eddie", "olivia", "oscar")


@pytest.mark.parametrize("name,url,expected", GET_RULES, ids=[r[0] for r in GET_RULES])
def test_get_rules(world, name, url, expected):
    for username, status in zip(PEOPLE, expected, strict=True):
        response = client_for(username).get(url(world))
        assert response.status_code == status, (name, username, response.status_code)


def _posts(w: World) -> list[tuple[str, str, dict, tuple[int, ...]]]:
    """(description, URL, data, expected status for viewer, editor, owner, outsider)."""
    ok = (403, 302, 302, 404)
    return [
        ("edit", f"/memories/{w.memory.pk}/edit/",
         {"content": "changed", "category": "note", "tier": "normal", "importance": 0.5}, ok),
        ("archive", f"/memories/{w.memory.pk}/archive/", {"archived": "1"}, ok),
        ("link", f"/memories/{w.memory.pk}/link/",
         {"target": str(w.other.pk), "relation": "caused", "direction": "out"}, ok),
        ("unlink", f"/memories/{w.memory.pk}/unlink/{w.edge.pk}/", {}, ok),
        ("bulk", "/ns/acme/memories/bulk/", {"action": "archive", "ids": [str(w.other.pk)]}, ok),
        ("create", "/ns/acme/memories/new/",
         {"content": "new one", "category": "note", "tier": "normal", "importance": 0.5,
          "on_duplicate": "keep"}, ok),
        ("revoke", f"/ns/acme/tokens/{w.token.pk}/revoke/", {}, (403, 403, 302, 404)),
        ("members", "/ns/acme/members/", {"username": "vera", "role": "viewer"},
         (403, 403, 302, 404)),
        ("restore version", f"/memories/{w.memory.pk}/revisions/{w.first_revision}/restore/",
         {}, ok),
        ("graph link", "/ns/acme/graph/link/",
         {"source": str(w.memory.pk), "target": str(w.other.pk), "relation": "depends_on"},
         (403, 201, 201, 404)),
        ("delete", f"/memories/{w.memory.pk}/delete/", {}, ok),
        ("restore from trash", f"/ns/acme/trash/{w.trash_entry}/restore/", {}, ok),
    ]  # fmt: skip


def test_post_rules(world):
    """Each person tries every change in turn; refusals must leave the data as it was."""
    for index, (username, _) in enumerate(zip(PEOPLE, range(4), strict=True)):
        client = client_for(username)
        for name, url, data, expected in _posts(world):
            response = client.post(url, data)
            assert response.status_code == expected[index], (name, username, response.status_code)
        if username in ("vera", "oscar"):
            assert trash_for_namespace(world.acme).filter(pk=world.trash_entry).exists()
            world.memory.refresh_from_db()
            assert world.memory.content == "Run the deploy checklist first."
            assert not world.memory.archived
            assert CausalEdge.objects.filter(pk=world.edge.pk).exists()
            assert not ApiToken.objects.get(pk=world.token.pk).revoked
        if username in ("eddie", "olivia"):
            # Their delete worked: recreate the fixture's memory for the next person's turn.
            assert not Memory.objects.filter(pk=world.memory.pk).exists()
            world.memory = services.memory_create(
                namespace=world.acme, content="Run the deploy checklist first."
            ).memory
            Memory.objects.filter(pk=world.other.pk).update(archived=False)
            ApiToken.objects.filter(pk=world.token.pk).update(revoked=False)
            _history(world)
            world.edge = services.edge_create(
                source=world.memory, target=world.other, relation="relates_to"
            )


def test_feedback_needs_the_namespace_and_its_own_search(world):
    from apps.search.services import search

    acme_log = search(namespace=world.acme, query="deploy checklist").query_log_id
    beta_log = search(namespace=world.beta, query="deploy").query_log_id
    data = {"namespace": "acme", "query_log_id": acme_log, "memory_id": str(world.memory.pk),
            "useful": "1"}  # fmt: skip
    assert client_for("vera").post("/feedback/", data).status_code == 200
    assert client_for("oscar").post("/feedback/", data).status_code == 404
    # A member of acme naming beta's search through acme: refused, nothing recorded.
    response = client_for("eddie").post("/feedback/", {**data, "query_log_id": beta_log})
    assert response.status_code == 400


def test_no_page_leaks_another_namespace(world):
    """Olivia owns acme only: beta's memory, its title and its search results never show."""
    olivia = client_for("olivia")
    assert olivia.get(f"/memories/{world.foreign.pk}/").status_code == 404
    assert olivia.get(f"/memories/{world.foreign.pk}/edit/").status_code == 404
    assert olivia.get("/?namespace=beta&q=deploy").status_code == 404
    assert olivia.get("/ns/beta/memories/").status_code == 404
    pages = [
        "/?namespace=acme&q=deploy+fridays",
        "/explain/?namespace=acme&q=deploy+fridays",
        "/ns/acme/memories/",
        f"/memories/{world.memory.pk}/",
        f"/memories/{world.memory.pk}/link/candidates/?q=beta+secret+plan",
        "/ns/acme/connect/",
        "/ns/acme/members/",
    ]
    for url in pages:
        html = olivia.get(url).content.decode()
        assert "Beta secret plan" not in html and str(world.foreign.pk) not in html, url
        assert '<option value="beta"' not in html, url
    # Changes naming beta's memory from acme's pages do nothing to it.
    link = {"target": str(world.foreign.pk), "relation": "caused", "direction": "out"}
    olivia.post(f"/memories/{world.memory.pk}/link/", link)
    olivia.post("/ns/acme/memories/bulk/", {"action": "delete", "ids": [str(world.foreign.pk)]})
    assert Memory.objects.filter(pk=world.foreign.pk, archived=False).exists()
    assert not CausalEdge.objects.filter(target=world.foreign).exists()


def test_viewer_sees_no_edit_controls(world):
    html = client_for("vera").get(f"/memories/{world.memory.pk}/").content.decode()
    assert "/edit/" not in html and "/delete/" not in html and "Link to another" not in html
    html = client_for("vera").get("/ns/acme/memories/").content.decode()
    assert 'name="ids"' not in html and "New memory" not in html


def test_members_page_keeps_an_owner(world):
    olivia = client_for("olivia")
    response = olivia.post("/ns/acme/members/", {"username": "olivia", "role": "viewer"})
    assert response.status_code == 400
    assert b"at least one owner" in response.content
    response = olivia.post("/ns/acme/members/", {"username": "oscar", "role": "editor"})
    assert response.status_code == 302
    role = NamespaceMembership.objects.get(user__username="oscar", namespace=world.acme).role
    assert role == "editor"
