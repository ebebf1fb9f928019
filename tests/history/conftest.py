from __future__ import annotations

from tests.api.conftest import api  # noqa: F401  (fixture)
from tests.api.live import asgi_server, tokens  # noqa: F401  (fixtures)
