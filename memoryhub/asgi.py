"""The one ASGI application: Django (UI, admin, REST) and, at /mcp, the MCP endpoint."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings.base")
application = get_asgi_application()
