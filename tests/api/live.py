"""The real ASGI app (`memoryhub.asgi:application`) served by uvicorn on a free port, in a
thread of the test process, so it sees the test database. Tests that talk to it use
`transactional_db`, so what they write is committed and visible to the server and back."""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass

import pytest
import uvicorn

from apps.access.services import token_create
from apps.memories.models import Namespace


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class _Shared:
    """One server per test session, however many conftests import the fixture."""

    url: str | None = None
    users = 0
    server: uvicorn.Server | None = None
    thread: threading.Thread | None = None


@pytest.fixture(scope="session")
def asgi_server(django_db_setup, django_db_blocker, embedding_model):
    """Base URL of a uvicorn server running the project's one ASGI application."""
    if _Shared.url is None:
        _Shared.url, _Shared.server, _Shared.thread = _start()
    _Shared.users += 1
    yield _Shared.url
    _Shared.users -= 1
    if _Shared.users == 0:
        _Shared.server.should_exit = True
        _Shared.thread.join(timeout=10)
        _Shared.url = None


def _start() -> tuple[str, uvicorn.Server, threading.Thread]:
    from memoryhub.asgi import application

    port = free_port()
    config = uvicorn.Config(
        application,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        lifespan="on",
        proxy_headers=False,  # as `make run`: the app reads them, from TRUSTED_PROXIES only
        http="memoryhub.http:HeaderDeadlineHttpTools",
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.05)
    from apps.core import readiness

    readiness.wait(timeout=60)  # the app warms up in the background, as a real server does
    return f"http://127.0.0.1:{port}", server, thread


@dataclass
class Tokens:
    """Namespaces alpha and beta; raw tokens with different scopes."""

    alpha: Namespace
    beta: Namespace
    alpha_rw: str
    alpha_ro: str
    beta_rw: str
    both_rw: str


@pytest.fixture
def tokens(transactional_db) -> Tokens:
    alpha = Namespace.objects.create(name="alpha")
    beta = Namespace.objects.create(name="beta")
    return Tokens(
        alpha=alpha,
        beta=beta,
        alpha_rw=token_create(name="a-rw", namespaces=[alpha])[1],
        alpha_ro=token_create(name="a-ro", namespaces=[alpha], read_only=True)[1],
        beta_rw=token_create(name="b-rw", namespaces=[beta])[1],
        both_rw=token_create(name="ab-rw", namespaces=[alpha, beta])[1],
    )


def bearer(raw: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {raw}"}
