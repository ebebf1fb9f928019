"""memoryhub under a path prefix behind nginx, in the production shape: nginx rendered from
ops/shape.py with the prefix, a web process started with the shape's command and settings
(production settings, MEMORYHUB_PUBLIC_URL=http://127.0.0.1:PORT/memory/), on this session's
test database instead of the shape's PostgreSQL servers and Redis.

The same checks as `make prod-check PROD_CHECK_ARGS="--prefix /memory/"` (ops/prefix_check.py),
then a person who logs in and an assistant that connects with OAuth, all under the prefix.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.db import connection

from apps.access.models import Role
from apps.access.services import membership_set, token_create
from apps.memories.models import Namespace
from ops import shape
from ops.prefix_check import run_checks
from tests.api.live import free_port
from tests.mcp.client import http_client, run, text_of
from tests.oauth import dance

ROOT = Path(__file__).resolve().parents[2]
PREFIX = "/memory"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
pytestmark = pytest.mark.django_db(transaction=True)


class Served:
    def __init__(self, origin: str, web: str, log: Path) -> None:
        self.origin, self.web, self.log = origin, web, log
        self.public = origin + PREFIX


def _app_env(nginx_port: int, web_port: int) -> dict[str, str]:
    """The shape's settings for an app process, its database and broker left out (the test
    database on the embedded server stands in for them), plus the public URL with a path."""
    shaped = shape.app_env(
        {
            "secret_key": secrets.token_urlsafe(60),
            "allowed_hosts": "127.0.0.1,localhost",
            "ssl_redirect": "false",
            "public_url": f"http://127.0.0.1:{nginx_port}{PREFIX}/",
            "db_password": "",
            "db_host": "",
            "db_port": "",
            "replica_host": "",
            "replica_port": "",
            "redis_host": "",
            "redis_port": "",
            "trusted_proxies": "127.0.0.1",
            "debounce_seconds": "2",
            "drain_seconds": "5",
        }
    )
    for name in ("DATABASE_URL", "DATABASE_REPLICA_URL", "CELERY_BROKER_URL", "ROUTING_CACHE_URL"):
        shaped.pop(name)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_"))}
    return {
        **env,
        **shaped,
        "EMBEDDED_DATABASE_NAME": connection.settings_dict["NAME"],
        "JOBS_SCHEDULER": "off",
        # Plain HTTP on this machine (TLS would end at nginx): cookies without the Secure flag.
        "DJANGO_SESSION_COOKIE_SECURE": "false",
        "DJANGO_CSRF_COOKIE_SECURE": "false",
    }


def _wait_healthy(url: str, process: subprocess.Popen, log: Path, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, "the web process exited:\n" + log.read_text()[-3000:]
        try:
            if httpx.get(url, timeout=3).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    raise AssertionError(f"{url} did not answer 200:\n" + log.read_text()[-3000:])


@pytest.fixture(scope="module")
def served(django_db_setup, django_db_blocker, tmp_path_factory, embedding_model):
    if not Path(NGINX).exists():
        pytest.fail("nginx is missing: apt-get install nginx-light (make test installs it)")
    tmp = tmp_path_factory.mktemp("prefix")
    nginx_port, web_port = free_port(), free_port()
    command = shape.command("web", {"web_host": "127.0.0.1", "web_port": web_port})
    log = tmp / "web.log"
    web = subprocess.Popen(
        [str(Path(sys.executable).parent / command[0]), *command[1:]],
        cwd=ROOT,
        env=_app_env(nginx_port, web_port),
        stdout=open(log, "wb"),  # noqa: SIM115 - the child owns it
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    conf = tmp / "nginx.conf"
    conf.write_text(
        shape.nginx_conf(
            listen=f"127.0.0.1:{nginx_port}",
            upstreams=[f"127.0.0.1:{web_port}"],
            pid=str(tmp / "nginx.pid"),
            prefix=str(tmp),
            path_prefix=PREFIX + "/",
        )
    )
    proxy = subprocess.Popen(
        [NGINX, "-c", str(conf), "-p", str(tmp), "-g", "daemon off;"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        # A health check reaches the web process directly, without the prefix.
        _wait_healthy(f"http://127.0.0.1:{web_port}/healthz", web, log)
        _wait_healthy(f"http://127.0.0.1:{nginx_port}{PREFIX}/healthz", web, log, timeout=30)
        yield Served(f"http://127.0.0.1:{nginx_port}", f"http://127.0.0.1:{web_port}", log)
    finally:
        for process in (proxy, web):
            os.killpg(process.pid, signal.SIGTERM)
        for process in (proxy, web):
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)


def test_pages_static_rest_mcp_and_oauth_metadata_are_under_the_prefix(served):
    namespace = Namespace.objects.create(name="prefixed")
    token = token_create(name="proxy", namespaces=[namespace])[1]
    outcomes = run_checks(served.origin, PREFIX, token, namespace.name)
    failed = [f"{o.name}: {o.text}" for o in outcomes if not o.ok]
    assert not failed, "\n".join(failed)
    assert len(outcomes) == 13


def test_a_person_logs_in_and_an_assistant_connects_with_oauth_under_the_prefix(served):
    # Hashed as the production server hashes (the test settings use a faster hasher).
    hashed = PBKDF2PasswordHasher().encode("correct-horse-battery", "pathprefixsalt")
    user = get_user_model().objects.create(username="ada", password=hashed)
    namespace = Namespace.objects.create(name="ada-notes")
    membership_set(namespace=namespace, user=user, role=Role.OWNER)
    session = httpx.Client(base_url=served.public, follow_redirects=False, timeout=60)

    # Log in from the page a protected address sent her to; she lands back on it.
    sent = session.get(f"/ns/{namespace.name}/connect/")
    assert sent.status_code == 302
    login_url = sent.headers["location"]
    assert login_url == f"{PREFIX}/login/?next={PREFIX}/ns/{namespace.name}/connect/"
    page = session.get(served.origin + login_url)
    answer = session.post(
        "/login/",
        data={
            **dance.hidden_fields(page.text),
            "username": "ada",
            "password": "correct-horse-battery",
        },
    )
    assert answer.status_code == 302, answer.text
    assert answer.headers["location"] == f"{PREFIX}/ns/{namespace.name}/connect/"
    connect = session.get(f"/ns/{namespace.name}/connect/")
    assert connect.status_code == 200
    assert f"{served.public}/mcp" in connect.text  # the address to give an assistant
    assert f'href="{PREFIX}/ns/{namespace.name}/memories/"' in connect.text

    # An assistant registers, she consents, it gets a token for the prefixed MCP endpoint.
    client_id = dance.register(served.public)
    verifier, challenge = dance.pkce()
    allowed = dance.consent(
        session,
        dance.authorize_url(served.public, client_id, challenge),
        namespaces=[namespace.pk],
        access="write",
    )
    assert allowed.status_code == 302, allowed.text
    query = {k: v[0] for k, v in parse_qs(urlsplit(allowed.headers["location"]).query).items()}
    assert query["iss"] == served.public
    tokens = dance.exchange(served.public, client_id, query["code"], verifier)
    assert tokens.status_code == 200, tokens.text

    async def scenario():
        async with http_client(served.public, tokens.json()["access_token"]) as client:
            await client.call_tool(
                "remember", {"content": "The proxy serves memoryhub under /memory."}
            )
            return await client.call_tool("memory_search", {"query": "what serves memoryhub"})

    assert "under /memory" in text_of(run(scenario))

    # Logging out lands on the login page under the prefix.
    form = dance.hidden_fields(session.get("/").text)
    out = session.post("/logout/", data=form)
    assert out.status_code == 302 and out.headers["location"] == f"{PREFIX}/login/"


def test_a_proxy_that_strips_the_prefix_and_direct_health_checks_are_served(served):
    """nginx's `proxy_pass http://memoryhub/;` passes /login/ for /memory/login/: the pages
    still link under the prefix."""
    direct = httpx.get(f"{served.web}/login/")
    assert direct.status_code == 200
    assert f'action="{PREFIX}/login/"' in direct.text
    assert f'href="{PREFIX}/static/' in direct.text
    assert httpx.get(f"{served.web}/static/ui/app.css").status_code == 200
    assert httpx.get(f"{served.web}{PREFIX}/healthz").status_code == 200
    redirect = httpx.get(f"{served.web}/ns/anything/memories/")
    assert redirect.headers["location"].startswith(f"{PREFIX}/login/?next={PREFIX}/ns/")
