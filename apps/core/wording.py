"""Words shown to people and assistants alike (UI pages, MCP text)."""

from __future__ import annotations

from django.template.defaultfilters import pluralize


def counted(count: int, word: str) -> str:
    """ "1 memory", "3 memories": `word` is "link" (an s is added) or "memory,memories"."""
    return (
        f"{count} {pluralize(count, word)}" if "," in word else f"{count} {word}{pluralize(count)}"
    )
