from __future__ import annotations

from tests.api.live import asgi_server, tokens  # noqa: F401  (fixtures)
