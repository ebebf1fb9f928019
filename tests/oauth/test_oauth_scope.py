"""What an OAuth connection may do: the namespaces granted, read-only or read-write as chosen,
never beyond the person's own role, and narrowed at once when that role changes or the person
leaves the namespace. Real MCP calls with the access token against the live server."""

from __future__ import annotations

import pytest

from apps.access.models import Role
from apps.access.services import membership_remove, membership_set
from apps.history.models import MemoryRevision
from apps.memories import services
from tests.mcp.client import http_client, run, structured, text_of

from .dance import login, mcp_status, register, tokens_for
from .people import PASSWORD, make_person

pytestmark = pytest.mark.django_db(transaction=True)


def call(base: str, token: str, tool: str, arguments: dict):
    async def scenario():
        async with http_client(base, token) as client:
            return await client.call_tool(tool, arguments)

    return run(scenario)


def remember(base, token, namespace):
    return call(
        base,
        token,
        "remember",
        {"namespace": namespace.name, "content": f"A note stored in {namespace.name}."},
    )


def search(base, token, namespace):
    return call(base, token, "memory_search", {"namespace": namespace.name, "query": "note"})


@pytest.fixture
def connected(asgi_server):
    person = make_person("scope")
    for ns in (person.alpha, person.beta, person.gamma):
        services.memory_create(namespace=ns, content=f"A note already in {ns.name}.")
    client_id = register(asgi_server, name="Scope app")
    session = login(asgi_server, person.username, PASSWORD)
    yield asgi_server, person, client_id, session
    session.close()


def test_read_write_reaches_only_what_was_granted_and_the_role_allows(connected):
    base, person, client_id, session = connected
    token = tokens_for(
        session, base, client_id, namespaces=[person.alpha.pk, person.beta.pk], access="write"
    )["access_token"]
    # Editor in alpha: writes; the change is the person's, made through the app.
    stored = remember(base, token, person.alpha)
    assert not stored.is_error, text_of(stored)
    revision = MemoryRevision.objects.get(memory_id=structured(stored)["id"])
    assert revision.actor_user == person.user
    assert revision.actor_label == "scope via Scope app"
    assert revision.door == "mcp"
    # Viewer in beta: the read-write grant still only reads there.
    assert not search(base, token, person.beta).is_error
    refused = remember(base, token, person.beta)
    assert refused.is_error
    assert "(viewer) does not allow this app to change" in text_of(refused)
    # Gamma was not granted (and the person is not a member): not even visible.
    hidden = search(base, token, person.gamma)
    assert hidden.is_error
    assert "does not exist or you cannot access it" in text_of(hidden)


def test_a_read_only_grant_never_writes(connected):
    base, person, client_id, session = connected
    token = tokens_for(session, base, client_id, namespaces=[person.alpha.pk], access="read")[
        "access_token"
    ]
    assert not search(base, token, person.alpha).is_error
    refused = remember(base, token, person.alpha)
    assert refused.is_error
    assert "connected read-only" in text_of(refused)


def test_a_change_of_role_or_membership_narrows_the_connection_at_once(connected):
    base, person, client_id, session = connected
    token = tokens_for(session, base, client_id, namespaces=[person.alpha.pk], access="write")[
        "access_token"
    ]
    assert not remember(base, token, person.alpha).is_error
    membership_set(namespace=person.alpha, user=person.user, role=Role.VIEWER)
    demoted = remember(base, token, person.alpha)
    assert demoted.is_error
    assert "(viewer) does not allow" in text_of(demoted)
    assert not search(base, token, person.alpha).is_error
    membership_remove(namespace=person.alpha, user=person.user)
    removed = search(base, token, person.alpha)
    assert removed.is_error
    assert "does not exist or you cannot access it" in text_of(removed)
    # Back as an editor: the grant (read-write in alpha) applies again.
    membership_set(namespace=person.alpha, user=person.user, role=Role.EDITOR)
    assert not remember(base, token, person.alpha).is_error


def test_a_deactivated_person_s_tokens_stop(connected):
    base, person, client_id, session = connected
    token = tokens_for(session, base, client_id, namespaces=[person.alpha.pk])["access_token"]
    assert not search(base, token, person.alpha).is_error
    person.user.is_active = False
    person.user.save()
    assert mcp_status(base, token) == 401
