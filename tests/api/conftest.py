from __future__ import annotations

import httpx
import pytest

from .live import asgi_server, tokens  # noqa: F401  (fixtures)


@pytest.fixture
def api(asgi_server):  # noqa: F811
    """httpx client against /api/v1/ of the live server; pass headers per call."""
    with httpx.Client(base_url=f"{asgi_server}/api/v1", timeout=60) as client:
        yield client
