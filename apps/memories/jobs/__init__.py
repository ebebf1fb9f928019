"""Background work over memories: PageRank of the causal graph, re-embedding, the
previous-turn passages a large write of dialog turns left (apps/memories/dialog.py), and the
rows a large batch left outside the HNSW index (apps/vectors/vector_index.py).

The bodies live here, beside the data they serve; apps.jobs is the infrastructure that runs,
records, locks and queues them. `register()` hands them over when the app is ready, and the
write path asks for a run after commit through `graph_changed()`, so the services never import
the job machinery.
"""

from __future__ import annotations

from django.conf import settings

from apps.jobs.models import Job
from apps.jobs.services import register_job
from apps.jobs.triggers import job_requested

from .. import dialog, unindexed
from ..models import Memory
from .pagerank import pagerank_update
from .reembed import reembed_update


def graph_changed(namespace_id: int) -> None:
    """Causal edges of a namespace were added, changed or removed (PageRank is stale)."""
    job_requested(Job.PAGERANK, namespace_id)


def dialog_turns_queued(namespace_id: int) -> None:
    """A write queued dialog turns for their previous-turn passages (apps/memories/dialog.py)."""
    job_requested(Job.DIALOG_PASSAGES, namespace_id)


def vectors_left_out(namespace_id: int) -> None:
    """A write stored rows outside the HNSW index (apps/vectors/vector_index.py)."""
    job_requested(Job.VECTOR_INDEX, namespace_id)


def small_enough_to_run_inline(namespace_id: int) -> bool:
    """Without a worker, PageRank runs after the write only while it takes a few tens of
    milliseconds; larger namespaces wait for `manage.py run_job pagerank` or a worker."""
    count = Memory.objects.filter(namespace_id=namespace_id).count()
    return count <= settings.JOBS_INLINE_MAX_MEMORIES


def register() -> None:
    register_job(Job.PAGERANK, pagerank_update, run_inline=small_enough_to_run_inline)
    register_job(Job.REEMBED, reembed_update)
    # Never after the write in the writer's process: that is the work a large write leaves
    # to the background (the worker, or the server's scheduler).
    register_job(Job.DIALOG_PASSAGES, dialog.write_queued, run_inline=lambda namespace_id: False)
    register_job(Job.VECTOR_INDEX, unindexed.index_waiting, run_inline=lambda namespace_id: False)
