"""Serving under a path prefix (MEMORYHUB_PUBLIC_URL=https://example.org/memory/).

A proxy may pass requests on with the prefix (nginx `proxy_pass http://memoryhub;`, the shape's
ops/nginx.conf.template) or without it (`proxy_pass http://memoryhub/;`), and health checks
reach a web process directly at /healthz: all three are answered. Inside, every layer of
memoryhub/asgi.py sees the path without the prefix (its own checks name /mcp, /static/,
/api/v1/search) and the prefix as the ASGI `root_path`; Django gets the whole path back
(`django_scope`), as its ASGI handler expects one that starts with the script name, so
`request.path`, redirects and `{% url %}` carry the prefix.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

STRIPPED = "memoryhub.prefix_stripped"


class PathPrefix:
    def __init__(self, app: ASGIApp, prefix: str) -> None:
        self.app = app
        self.prefix = prefix.rstrip("/")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.prefix and scope["type"] in ("http", "websocket"):
            scope = {
                **scope,
                "path": self.strip(scope["path"]),
                "root_path": self.prefix,
                STRIPPED: True,
            }
        await self.app(scope, receive, send)

    def strip(self, path: str) -> str:
        if path == self.prefix or path.startswith(self.prefix + "/"):
            return path[len(self.prefix) :] or "/"
        return path


def django_scope(scope: Scope) -> Scope:
    """The scope Django's handler expects: `path` begins with `root_path` (the script name)."""
    if scope.get(STRIPPED):
        return {**scope, "path": scope["root_path"] + scope["path"]}
    return scope
