"""The synchronous body of each MCP tool: resolve the token's scope, call one service or
selector, shape the result. Runs in a worker thread (see runtime.run_sync)."""

from __future__ import annotations

from typing import Any

from mcp_types import CallToolResult

from apps.access.models import ApiToken
from apps.access.permissions import Action
from apps.access.scoping import batch_job_for, memory_for, namespace_for
from apps.core.dates import parse_instant
from apps.core.exceptions import NotFound, ValidationFailed
from apps.core.wording import counted
from apps.history import selectors as history_selectors
from apps.memories import services as memory_services
from apps.memories.provenance import Origin
from apps.search.feedback import feedback_record
from apps.search.selectors import memory_chain, query_log_for
from apps.search.services import render_markdown
from apps.search.services import search as search_service
from apps.transfer import batch_jobs
from apps.transfer.models import BatchJob, BatchState

from .render import (
    chain_markdown,
    edge_to_dict,
    memory_markdown,
    memory_to_dict,
    tool_result,
    write_result_markdown,
)


def search(
    token: ApiToken,
    *,
    namespace: str | None,
    query: str,
    after: str | None = None,
    before: str | None = None,
    token_budget: int | None = None,
    **params: Any,
) -> CallToolResult:
    ns = namespace_for(token, namespace)
    response = search_service(
        namespace=ns,
        query=query,
        after=parse_instant(after, field="after"),
        before=parse_instant(before, field="before"),
        token_budget=token_budget,
        **params,
    )
    structured = response.to_dict()
    for memory in structured["memories"]:
        # Every result says whether a person reviewed it and what was flagged (a memory
        # found by search took effect, so "approved" when the row does not say otherwise).
        memory.setdefault("review", "approved")
        memory.setdefault("risk", [])
    return tool_result(render_markdown(response, token_budget=token_budget), structured)


def why(
    token: ApiToken,
    *,
    namespace: str | None,
    query: str | None,
    memory_id: str | None,
    direction: str,
) -> CallToolResult:
    """memory_why: the chain from a memory, or from the best match of a query."""
    if bool(query and query.strip()) == bool(memory_id):
        field = "memory_id" if memory_id else "query"
        raise ValidationFailed({field: "Give either a query or a memory_id (one of the two)."})
    if memory_id:
        start = memory_for(token, memory_id)
        if namespace is not None and namespace_for(token, namespace).pk != start.namespace_id:
            raise NotFound(f"Memory {memory_id} does not exist in namespace '{namespace}'.")
        path = memory_chain(memory=start, direction=direction)
        asked = start.display_title
    else:
        ns = namespace_for(token, namespace)
        path = search_service(namespace=ns, query=query, limit=5, causal=direction).path
        asked = query
    return tool_result(
        chain_markdown(path, asked=asked, direction=direction),
        {"direction": direction, "path": path, "found": bool(path)},
    )


def remember(
    token: ApiToken, *, namespace: str | None, origin: Origin | None = None, **fields: Any
) -> CallToolResult:
    ns = namespace_for(token, namespace, action=Action.CHANGE)
    fields["created_at"] = parse_instant(fields.get("created_at"), field="created_at")
    result = memory_services.memory_create(
        namespace=ns, actor=token, door="mcp", origin=origin, **_drop_none(fields)
    )
    return tool_result(write_result_markdown(result), result.to_dict())


def remember_batch(
    token: ApiToken,
    *,
    namespace: str | None,
    items: list[dict[str, Any]],
    on_duplicate: str,
    background: bool | None = None,
    origin: Origin | None = None,
) -> CallToolResult:
    ns = namespace_for(token, namespace, action=Action.CHANGE)
    for index, item in enumerate(items):
        item["created_at"] = parse_instant(
            item.get("created_at"), field=f"items[{index}].created_at"
        )
    results = batch_jobs.write_or_keep(
        namespace=ns,
        items=[_drop_none(i) for i in items],
        on_duplicate=on_duplicate,
        actor=token,
        door="mcp",
        background=background,
        origin=origin,
    )
    if isinstance(results, BatchJob):
        return _job_result(results)
    created = sum(1 for r in results if r.created)
    stored = len(results) - created
    lines = [f"Stored in '{ns.name}': {created} new, {stored} already stored."]
    lines += [f"{i + 1}. {write_result_markdown(r)}" for i, r in enumerate(results)]
    return tool_result(
        "\n".join(lines),
        {"created": created, "already_stored": stored, "results": [r.to_dict() for r in results]},
    )


def batch_status(token: ApiToken, *, job_id: str) -> CallToolResult:
    return _job_result(batch_job_for(token, job_id))


def _job_result(job) -> CallToolResult:
    """A kept batch as a tool result: one line for the assistant, the job for a program."""
    where = f"'{job.namespace.name}'"
    if job.state == BatchState.DONE:
        text = (
            f"Batch `{job.id}` done: {job.created} new, {job.already_stored} already stored "
            f"in {where}."
        )
    elif job.state == BatchState.FAILED:
        problems = "; ".join(f"{k}: {v}" for k, v in job.errors.items())
        text = f"Batch `{job.id}` failed, nothing stored: {problems}"
    else:
        text = (
            f"Batch `{job.id}` of {counted(job.total, 'memory,memories')} for {where} is "
            f"{job.state} "
            f'({job.done} encoded); call batch_status with job_id "{job.id}" to follow it.'
        )
    data = {"job_id": str(job.id), **batch_jobs.summary(job)}
    return tool_result(text, data)


def link(
    token: ApiToken, *, source_id: str, target_id: str, relation: str, strength: float
) -> CallToolResult:
    source = memory_for(token, source_id, action=Action.CHANGE, field="source_id")
    target = memory_for(token, target_id, action=Action.CHANGE, field="target_id")
    edge = memory_services.edge_create(
        source=source, target=target, relation=relation, strength=strength, actor=token, door="mcp"
    )
    text = f"Linked `{source.id}` -{relation}-> `{target.id}` (strength {edge.strength:.2f})."
    return tool_result(text, edge_to_dict(edge))


def feedback(
    token: ApiToken,
    *,
    query_log_id: int,
    was_useful: bool | None,
    result_feedback: dict[str, bool] | None,
) -> CallToolResult:
    log = query_log_for(token, query_log_id, action=Action.FEEDBACK)
    log = feedback_record(
        query_log_id=log.pk,
        namespace=log.namespace,
        was_useful=was_useful,
        result_feedback=result_feedback,
    )
    return tool_result(
        f"Thanks: feedback recorded for search {log.pk}.",
        {
            "query_log_id": log.pk,
            "was_useful": log.was_useful,
            "result_feedback": log.result_feedback,
        },
    )


def get(token: ApiToken, *, memory_id: str) -> CallToolResult:
    memory = memory_for(token, memory_id)
    data = memory_to_dict(memory, with_edges=True)
    text = memory_markdown(memory)
    if data["edges"]:
        text += "\n\nLinks:\n" + "\n".join(
            f"- `{e['source']}` -{e['relation']}-> `{e['target']}`" for e in data["edges"]
        )
    return tool_result(text, data)


def update(
    token: ApiToken,
    *,
    memory_id: str,
    expected_version: int | None = None,
    confirm_constitutional: bool = False,
    **fields: Any,
) -> CallToolResult:
    memory = memory_for(token, memory_id, action=Action.CHANGE)
    changes = _drop_none(fields)
    if changes or expected_version is not None:
        memory = memory_services.memory_update(
            memory=memory,
            actor=token,
            door="mcp",
            expected_version=expected_version,
            confirm_constitutional=confirm_constitutional,
            **changes,
        )
    text = memory_markdown(memory, heading=f"Updated: {', '.join(changes) or 'nothing changed'}.")
    return tool_result(text, memory_to_dict(memory))


def forget(
    token: ApiToken, *, memory_id: str, permanent: bool, confirm_constitutional: bool = False
) -> CallToolResult:
    memory = memory_for(token, memory_id, action=Action.CHANGE)
    confirmed = {"confirm_constitutional": confirm_constitutional}
    if permanent:
        memory_services.memory_delete(memory=memory, actor=token, door="mcp", **confirmed)
        text = f"Deleted memory `{memory_id}` permanently."
    else:
        memory_services.memory_archive(memory=memory, actor=token, door="mcp", **confirmed)
        text = f"Archived memory `{memory.id}`: search no longer returns it."
    return tool_result(text, {"id": str(memory_id), "deleted": permanent, "archived": True})


def history(
    token: ApiToken, *, memory_id: str, namespace: str | None, limit: int
) -> CallToolResult:
    """A memory's revisions, newest first; also of a deleted memory still in the trash."""
    wanted = namespace_for(token, namespace) if namespace else None
    try:
        found = memory_for(token, memory_id)
        ns, deleted = found.namespace, False
    except NotFound:
        found = history_selectors.trash_entry_of_memory(token, memory_id)
        if found is None:
            raise
        ns, deleted = found.namespace, True
    if wanted is not None and wanted.pk != ns.pk:
        raise NotFound(f"Memory {memory_id} does not exist in namespace '{wanted.name}'.")
    revisions = list(history_selectors.revisions_for_memory(found)[:limit])
    lines = [
        f"History of memory `{memory_id}` in '{ns.name}'"
        + (" (deleted; restorable from the trash)" if deleted else "")
        + f": {counted(len(revisions), 'revision')}, newest first."
    ]
    for rev in revisions:
        fields = ", ".join(rev.changed_fields) or "-"
        lines.append(
            f"- {rev.created_at:%Y-%m-%d %H:%M:%S} UTC · {rev.get_action_display()} by "
            f"{rev.actor_label} via {rev.door} · {fields}"
        )
    data = {
        "memory_id": str(memory_id),
        "namespace": ns.name,
        "deleted": deleted,
        "revisions": [
            {
                "id": rev.pk,
                "action": rev.action,
                "door": rev.door,
                "actor": rev.actor_label,
                "created_at": rev.created_at,
                "before": rev.before,
                "after": rev.after,
            }
            for rev in revisions
        ],
    }
    return tool_result("\n".join(lines), data)


def _drop_none(fields: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None}
