"""memoryhub under a path prefix behind nginx, in the production shape (tests/core/prefixed.py):
the same checks as `make prod-check PROD_CHECK_ARGS="--prefix /memory/"` (ops/prefix_check.py),
then a person who logs in and an assistant that connects with OAuth, all under the prefix, and
a proxy that strips the prefix.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from apps.access.models import Role
from apps.access.services import membership_set, token_create
from apps.memories.models import Namespace
from ops.prefix_check import run_checks
from tests.mcp.client import http_client, run, text_of
from tests.oauth import dance

from .prefixed import PASSWORD, PREFIX, make_person, prefixed  # noqa: F401  (the fixture)

pytestmark = pytest.mark.django_db(transaction=True)


def test_pages_static_rest_mcp_and_oauth_metadata_are_under_the_prefix(prefixed):  # noqa: F811
    namespace = Namespace.objects.create(name="prefixed")
    token = token_create(name="proxy", namespaces=[namespace])[1]
    outcomes = run_checks(prefixed.origin, PREFIX, token, namespace.name)
    failed = [f"{o.name}: {o.text}" for o in outcomes if not o.ok]
    assert not failed, "\n".join(failed)
    assert len(outcomes) == 13


def test_a_person_logs_in_and_an_assistant_connects_with_oauth_under_the_prefix(prefixed):  # noqa: F811
    user = make_person("ada")
    namespace = Namespace.objects.create(name="ada-notes")
    membership_set(namespace=namespace, user=user, role=Role.OWNER)
    session = httpx.Client(base_url=prefixed.public, follow_redirects=False, timeout=60)

    # Log in from the page a protected address sent her to; she lands back on it.
    sent = session.get(f"/ns/{namespace.name}/connect/")
    assert sent.status_code == 302
    login_url = sent.headers["location"]
    assert login_url == f"{PREFIX}/login/?next={PREFIX}/ns/{namespace.name}/connect/"
    page = session.get(prefixed.origin + login_url)
    answer = session.post(
        "/login/",
        data={
            **dance.hidden_fields(page.text),
            "username": "ada",
            "password": PASSWORD,
        },
    )
    assert answer.status_code == 302, answer.text
    assert answer.headers["location"] == f"{PREFIX}/ns/{namespace.name}/connect/"
    connect = session.get(f"/ns/{namespace.name}/connect/")
    assert connect.status_code == 200
    assert f"{prefixed.public}/mcp" in connect.text  # the address to give an assistant
    assert f'href="{PREFIX}/ns/{namespace.name}/memories/"' in connect.text

    # An assistant registers, she consents, it gets a token for the prefixed MCP endpoint.
    client_id = dance.register(prefixed.public)
    verifier, challenge = dance.pkce()
    allowed = dance.consent(
        session,
        dance.authorize_url(prefixed.public, client_id, challenge),
        namespaces=[namespace.pk],
        access="write",
    )
    assert allowed.status_code == 302, allowed.text
    query = {k: v[0] for k, v in parse_qs(urlsplit(allowed.headers["location"]).query).items()}
    assert query["iss"] == prefixed.public
    tokens = dance.exchange(prefixed.public, client_id, query["code"], verifier)
    assert tokens.status_code == 200, tokens.text

    async def scenario():
        async with http_client(prefixed.public, tokens.json()["access_token"]) as client:
            await client.call_tool(
                "remember", {"content": "The proxy serves memoryhub under /memory."}
            )
            return await client.call_tool("memory_search", {"query": "what serves memoryhub"})

    assert "under /memory" in text_of(run(scenario))

    # Logging out lands on the login page under the prefix.
    form = dance.hidden_fields(session.get("/").text)
    out = session.post("/logout/", data=form)
    assert out.status_code == 302 and out.headers["location"] == f"{PREFIX}/login/"


def test_a_proxy_that_strips_the_prefix_and_direct_health_checks_are_served(prefixed):  # noqa: F811
    """nginx's `proxy_pass http://memoryhub/;` passes /login/ for /memory/login/: the pages
    still link under the prefix."""
    direct = httpx.get(f"{prefixed.web}/login/")
    assert direct.status_code == 200
    assert f'action="{PREFIX}/login/"' in direct.text
    assert f'href="{PREFIX}/static/' in direct.text
    assert httpx.get(f"{prefixed.web}/static/ui/app.css").status_code == 200
    assert httpx.get(f"{prefixed.web}{PREFIX}/healthz").status_code == 200
    redirect = httpx.get(f"{prefixed.web}/ns/anything/memories/")
    assert redirect.headers["location"].startswith(f"{PREFIX}/login/?next={PREFIX}/ns/")
