"""The hash that finds a memory's exact duplicates: the write path and its preview look a text up
by it before storing it again."""

from __future__ import annotations

import hashlib


def content_hash(content: str) -> str:
    return hashlib.sha256(content.strip().encode()).hexdigest()
