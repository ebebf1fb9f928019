"""What the write path derives from a memory's text: the string that gets embedded and the
hash that finds exact duplicates. Shared by the services and the re-embedding job, so a
re-embedded memory matches a freshly written one."""

from __future__ import annotations

import hashlib


def content_hash(content: str) -> str:
    return hashlib.sha256(content.strip().encode()).hexdigest()


def embedding_text(title: str, content: str) -> str:
    return f"{title}\n{content}" if title and title not in content else content
