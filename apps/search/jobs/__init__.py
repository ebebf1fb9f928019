"""Background work the search log feeds: learned strategy weights from feedback, and memory
stability (decay) from the accesses searches record.

The bodies live here; apps.jobs runs, records, locks and queues them. `register()` hands them
over when the app is ready; feedback asks for a weights run after commit through
`feedback_recorded()`.
"""

from __future__ import annotations

from apps.jobs.models import Job
from apps.jobs.services import register_job
from apps.jobs.triggers import job_requested

from .decay import decay_update
from .feedback_weights import feedback_weights_update


def feedback_recorded(namespace_id: int) -> None:
    """New search feedback in a namespace (learned strategy weights may be stale)."""
    job_requested(Job.FEEDBACK_WEIGHTS, namespace_id)


def register() -> None:
    register_job(Job.FEEDBACK_WEIGHTS, feedback_weights_update)
    register_job(Job.DECAY, decay_update)
