"""Every write to memories, tags and edges (SPEC section 3).

All functions are keyword-only and atomic: a failure anywhere leaves nothing written. Work that
background jobs derive from (PageRank) is queued with transaction.on_commit.
"""

from .change import (
    UPDATABLE,
    memories_archive,
    memories_merge,
    memories_reembed,
    memories_unmerge,
    memory_archive,
    memory_delete,
    memory_locked,
    memory_update,
)
from .create import (
    ON_DUPLICATE,
    WriteResult,
    memory_batch_create,
    memory_create,
)
from .edges import edge_create, edge_delete, memory_links_add
from .namespaces import namespace_get_or_create
from .refresh import memories_refresh, memory_refresh_undo, refresh_revision
from .tagging import tag_delete, tag_rename
from .trash import UndeleteResult, memory_undelete
from .validity import supersede_undo, supersede_undoable

__all__ = [
    "ON_DUPLICATE",
    "UPDATABLE",
    "UndeleteResult",
    "WriteResult",
    "edge_create",
    "edge_delete",
    "memories_archive",
    "memories_merge",
    "memories_reembed",
    "memories_unmerge",
    "memories_refresh",
    "memory_archive",
    "memory_batch_create",
    "memory_create",
    "memory_delete",
    "memory_links_add",
    "memory_locked",
    "memory_refresh_undo",
    "memory_undelete",
    "memory_update",
    "namespace_get_or_create",
    "refresh_revision",
    "supersede_undo",
    "supersede_undoable",
    "tag_delete",
    "tag_rename",
]
