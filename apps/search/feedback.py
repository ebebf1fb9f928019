"""Recording feedback on a search (SPEC sections 2 and 6).

Feedback goes on the search's QueryLog: an overall verdict (`was_useful`) and/or per-result
verdicts (`result_feedback`, {memory_id: bool}, ids among the results that search returned).
Per-result verdicts given later are merged into earlier ones; a later overall verdict replaces
the earlier one. After commit the feedback-weights job is asked to re-learn the namespace's
strategy weights (apps.search.jobs.feedback_recorded).
"""

from __future__ import annotations

from datetime import UTC
from typing import Any

from django.db import transaction
from django.utils import timezone

from apps.core.exceptions import NotFound, ValidationFailed
from apps.memories.models import Namespace
from apps.search.models import QueryLog

from . import rollup
from .jobs import feedback_recorded


def _namespace_id(namespace: Namespace | int) -> int:
    return namespace.pk if isinstance(namespace, Namespace) else int(namespace)


def _clean_result_feedback(result_feedback: object, log: QueryLog) -> dict[str, bool]:
    if not isinstance(result_feedback, dict):
        raise ValidationFailed({"result_feedback": "Must map memory ids to true or false."})
    returned = {str(r.get("id")) for r in log.results or []}
    cleaned, errors = {}, []
    for memory_id, useful in result_feedback.items():
        key = str(memory_id)
        if not isinstance(useful, bool):
            errors.append(f"{key}: the verdict must be true or false.")
        elif key not in returned:
            errors.append(f"{key}: not among the results of this search.")
        else:
            cleaned[key] = useful
    if errors:
        raise ValidationFailed({"result_feedback": errors})
    return cleaned


@transaction.atomic
def feedback_record(
    *,
    query_log_id: int,
    namespace: Namespace | int,
    was_useful: bool | None = None,
    result_feedback: dict[str, Any] | None = None,
) -> QueryLog:
    """Record feedback on one search of `namespace`; NotFound if it is another namespace's."""
    if was_useful is None and not result_feedback:
        raise ValidationFailed(
            {"was_useful": "Give an overall verdict or per-result verdicts (result_feedback)."}
        )
    if was_useful is not None and not isinstance(was_useful, bool):
        raise ValidationFailed({"was_useful": "Must be true, false or null."})
    namespace_id = _namespace_id(namespace)
    try:
        query_id = int(query_log_id)
    except (TypeError, ValueError):
        raise ValidationFailed({"query_log_id": "Must be a search id (an integer)."}) from None
    log: QueryLog | None = (
        QueryLog.objects.select_for_update().filter(pk=query_id, namespace_id=namespace_id).first()
    )
    if log is None:
        raise NotFound(f"No search {query_id} in this namespace.")
    fields = ["feedback_at"]
    if result_feedback:
        log.result_feedback = {
            **(log.result_feedback or {}),
            **_clean_result_feedback(result_feedback, log),
        }
        fields.append("result_feedback")
    if was_useful is not None:
        log.was_useful = was_useful
        fields.append("was_useful")
    log.feedback_at = timezone.now()
    log.save(update_fields=fields)
    # The analytics roll-up of that search's day counted it unjudged: redo that day.
    rollup.forget_day(namespace_id=namespace_id, day=log.created_at.astimezone(UTC).date())
    transaction.on_commit(lambda: feedback_recorded(namespace_id))
    return log
