"""memoryhub under a path prefix behind nginx, in the production shape, for the tests that use
it (tests/core/test_path_prefix.py, tests/ui/test_browser_path_prefix.py): nginx rendered from
ops/shape.py with the prefix, and a web process started with the shape's command and settings
(production settings, MEMORYHUB_PUBLIC_URL=http://127.0.0.1:PORT/memory/), on this session's
test database instead of the shape's PostgreSQL servers and Redis. Tests that use it write with
`transactional_db`, so the web process sees what they seed."""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.db import connection

from ops import shape
from tests.api.live import free_port

ROOT = Path(__file__).resolve().parents[2]
PREFIX = "/memory"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
PASSWORD = "correct-horse-battery"


def make_person(username: str):
    """A user whose password the web process can check: hashed as production hashes (the test
    settings use a faster hasher it does not know)."""
    hashed = PBKDF2PasswordHasher().encode(PASSWORD, secrets.token_hex(8))
    return get_user_model().objects.create(username=username, password=hashed)


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
def prefixed(django_db_setup, django_db_blocker, tmp_path_factory, embedding_model):
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
