from __future__ import annotations

from tests.api.live import asgi_server  # noqa: F401  (fixture)
