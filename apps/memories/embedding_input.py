"""The string of a memory that gets embedded. Shared by the services and the re-embedding job,
so a re-embedded memory matches a freshly written one."""

from __future__ import annotations


def embedding_text(title: str, content: str) -> str:
    return f"{title}\n{content}" if title and title not in content else content
