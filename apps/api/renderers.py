"""text/markdown answers: the compact text an assistant reads (the MCP memory_search tool's),
for clients that print it straight into a session, such as a Claude Code SessionStart hook
(docs/session-start.md). JSON stays the default; this is chosen with `Accept: text/markdown`."""

from __future__ import annotations

from typing import Any

from rest_framework.renderers import BaseRenderer


class MarkdownRenderer(BaseRenderer):
    media_type = "text/markdown"
    format = "md"
    charset = "utf-8"

    def render(self, data: Any, accepted_media_type=None, renderer_context=None) -> bytes:
        if isinstance(data, str):
            return data.encode(self.charset)
        return error_text(data).encode(self.charset)


def error_text(data: Any) -> str:
    """The API's error shape ({"detail", "errors"}) as lines a person reads in a terminal."""
    if not isinstance(data, dict):
        return f"{data}\n"
    errors = data.get("errors") or {}
    if not errors:
        return f"Error: {data.get('detail') or 'the request was refused.'}\n"
    lines = ["Error: invalid input."]  # the detail only repeats the fields' messages
    for field, messages in errors.items():
        text = " ".join(messages) if isinstance(messages, list) else str(messages)
        lines.append(f"- {field}: {text}")
    return "\n".join(lines) + "\n"
