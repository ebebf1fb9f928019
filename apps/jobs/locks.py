"""Postgres advisory locks: one run per (job, namespace) at a time, across every process."""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection


def lock_key(job: str, namespace_id: int | None) -> tuple[int, int]:
    """Two int4 keys: a stable per-job class id and the namespace id (0 = all namespaces)."""
    return zlib.crc32(f"memoryhub.jobs.{job}".encode()) & 0x7FFFFFFF, int(namespace_id or 0)


@contextmanager
def advisory_lock(job: str, namespace_id: int | None) -> Iterator[None]:
    """Hold a session-level advisory lock for the block; a second run waits for the first.

    Waiting (rather than skipping) is what makes overlap safe: the second run starts after the
    first has committed, reads the data as it is then, and writes the same values again, so two
    overlapping runs leave what one run leaves. Session-level (not transaction-level) so that a
    job may commit in batches while holding it.
    """
    key = lock_key(job, namespace_id)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s, %s)", key)
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s, %s)", key)
