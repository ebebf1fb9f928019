"""The memories a large batch left outside the HNSW index: how many wait, whether a batch may
join them, and the vector_index job over the memories' table. The rule and the statements are
the model runtime's (apps/vectors/vector_index.py); this module names the table and the rows.
"""

from __future__ import annotations

from collections.abc import Iterable

from apps.vectors import vector_index

from .models import Memory, Namespace


def waiting(namespace_ids: Iterable[int] | None = None) -> int:
    """How many rows wait outside the HNSW index (in these namespaces), one count through the
    partial index memory_ns_unindexed."""
    rows = Memory.every_state.filter(vector_indexed=False)
    if namespace_ids is not None:
        rows = rows.filter(namespace_id__in=list(namespace_ids))
    return rows.count()


def write_behind(namespace_id: int, rows: int) -> bool:
    """Whether a batch of `rows` new rows goes in outside the index: a large batch, while the
    namespace's rows outside stay within the bound."""
    return vector_index.write_behind(rows, lambda: waiting([namespace_id]))


def health() -> dict:
    """For /healthz: rows waiting for the vector_index job, over every namespace."""
    return {"rows_waiting": waiting()}


def index_waiting(namespace: Namespace, **options) -> dict:
    """The vector_index job: add the namespace's rows outside the HNSW index to it. No revision,
    no new version (nothing a user wrote)."""
    return {"rows_indexed": vector_index.index_waiting(Memory._meta.db_table, namespace.pk)}
