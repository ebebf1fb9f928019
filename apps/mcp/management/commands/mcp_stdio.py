"""python manage.py mcp_stdio --token T: the MCP server over stdin/stdout for desktop clients.

stdout carries the protocol only; everything else (logs, errors) goes to stderr.
"""

from __future__ import annotations

import os

import anyio
from django.core.management.base import BaseCommand, CommandError

from apps.access.services import token_authenticate
from apps.core import readiness
from apps.mcp.runtime import configure_stdio_token
from apps.mcp.server import build_server
from memoryhub.warmup import warm

WARM_UP_WAIT_SECONDS = 120


class Command(BaseCommand):
    help = "Serve the memoryhub MCP tools over stdio (for Claude Desktop, Claude Code, Cursor)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--token",
            default=os.environ.get("MEMORYHUB_TOKEN", ""),
            help="API token (default: $MEMORYHUB_TOKEN).",
        )

    def handle(self, *args, token: str, **options):
        if not token:
            raise CommandError("An API token is required: --token T or MEMORYHUB_TOKEN=T.")
        if token_authenticate(token) is None:
            raise CommandError("The API token is invalid or revoked.")
        configure_stdio_token(token)
        # Load the model while the client starts its session, not on its first tool call.
        readiness.start(lambda: warm(http=False))
        anyio.run(build_server().run_stdio_async)
        # stdin closed. Leaving while the warm-up thread is inside the model's native code
        # aborted the process at interpreter exit ("terminate called without an active
        # exception", SIGABRT): let it finish first.
        readiness.wait(timeout=WARM_UP_WAIT_SECONDS)
