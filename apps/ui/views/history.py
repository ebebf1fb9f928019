"""A memory's history with readable diffs and "restore this version"; the namespace's trash."""

from __future__ import annotations

import json

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from apps.core.exceptions import ValidationFailed
from apps.history.conf import history_settings
from apps.history.diff import TEXT_FIELDS, word_diff
from apps.history.models import Action as Change
from apps.history.models import MemoryRevision
from apps.history.selectors import revisions_for_memory, trash_for_namespace
from apps.history.services import revision_restore, trash_restore
from apps.memories.models import Memory, Namespace
from apps.memories.services import memory_refresh_undo, refresh_revision
from apps.queues.services import merge_revision, merge_undo

from ..access import Action, can, memory_view, namespace_view
from .common import writer

HISTORY_PAGE = 50
TRASH_PAGE = 100


# Revisions that leave a version of the memory's fields behind (links and deletions do not).
VERSION_ACTIONS = set(Change.values) - {Change.LINK, Change.UNLINK, Change.DELETE}
EMPTY = (None, "", [], {}, False)


def _shown(value):
    """A field value as a person reads it: lists joined, objects as JSON, flags as yes/no."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or "—"
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False) if value else "—"
    return value


def field_changes(revision: MemoryRevision) -> list[dict]:
    """What one revision changed, from its own before/after (no query): per field the old and
    new value, and for text a word diff. A creation lists only the fields it filled in."""
    before, after = revision.before or {}, revision.after or {}
    rows = []
    for name in sorted(set(before) | set(after)):
        old, new = before.get(name), after.get(name)
        if revision.before is None and name != "edge" and new in EMPTY:
            continue
        shown = (old, new) if name == "edge" else (_shown(old), _shown(new))
        if name == "edges_moved":
            shown = (None, f"{len(new or [])} link(s) moved to this memory")
        row = {"name": name, "before": shown[0], "after": shown[1], "words": []}
        if name in TEXT_FIELDS and revision.before is not None and revision.after is not None:
            row["words"] = word_diff(old or "", new or "")
        rows.append(row)
    return rows


def history_rows(memory: Memory, limit: int) -> list[dict]:
    revisions = list(revisions_for_memory(memory)[:limit])
    return [
        {
            "revision": r,
            "changes": field_changes(r),
            "is_version": r.action in VERSION_ACTIONS,
            "undo": _undo_kind(r),
        }
        for r in revisions
    ]


def _undo_kind(revision: MemoryRevision) -> str:
    """Changes a version restore cannot take back have their own undo: a merge (the merged
    memories and moved links come back) and a refresh (stability and last use)."""
    if merge_revision(revision):
        return "merge"
    if refresh_revision(revision):
        return "refresh"
    return ""


@memory_view(Action.CHANGE)
@require_POST
def undo_change(request: HttpRequest, memory: Memory, revision_id: int) -> HttpResponse:
    revision = revisions_for_memory(memory).filter(pk=revision_id).first()
    if revision is None or not _undo_kind(revision):
        raise Http404("No such change to undo on this memory.")
    try:
        if _undo_kind(revision) == "merge":
            back = merge_undo(revision=revision, **writer(request))
            messages.success(
                request,
                f"Merge undone: {len(back)} memory came back with its links "
                "(each step recorded as a revision).",
            )
        else:
            memory_refresh_undo(memory=memory, before=revision.before, **writer(request))
            messages.success(request, "Refresh undone: stability and last use are back.")
    except ValidationFailed as exc:
        messages.error(request, exc.summary())
    return redirect("ui:history", memory_id=memory.pk)


@memory_view(Action.VIEW)
def history_page(request: HttpRequest, memory: Memory) -> HttpResponse:
    context = {
        "memory": memory,
        "namespace": memory.namespace,
        "rows": history_rows(memory, HISTORY_PAGE),
        "can_change": can(request.user, memory.namespace, Action.CHANGE),
    }
    return render(request, "ui/history/page.html", context)


@memory_view(Action.CHANGE)
@require_POST
def restore_version(request: HttpRequest, memory: Memory, revision_id: int) -> HttpResponse:
    revision = revisions_for_memory(memory).filter(pk=revision_id).first()
    if revision is None:
        raise Http404("No such version of this memory.")
    try:
        revision_restore(revision=revision, **writer(request))
        messages.success(request, "Restored that version (recorded as a new revision).")
    except ValidationFailed as exc:
        messages.error(request, exc.summary())
    return redirect("ui:history", memory_id=memory.pk)


@namespace_view(Action.VIEW)
def trash_page(request: HttpRequest, namespace: Namespace) -> HttpResponse:
    context = {
        "namespace": namespace,
        "trash_days": history_settings().trash_days,
        "entries": list(trash_for_namespace(namespace)[:TRASH_PAGE]),
        "can_change": can(request.user, namespace, Action.CHANGE),
    }
    return render(request, "ui/trash/page.html", context)


@namespace_view(Action.CHANGE)
@require_POST
def trash_restore_view(request: HttpRequest, namespace: Namespace, entry_id: int) -> HttpResponse:
    entry = trash_for_namespace(namespace).filter(pk=entry_id).first()
    if entry is None:
        raise Http404("No such entry in this namespace's trash.")
    try:
        result = trash_restore(entry=entry, **writer(request))
    except ValidationFailed as exc:
        messages.error(request, exc.summary())
        return redirect("ui:trash", namespace=namespace.name)
    note = "Restored from the trash, with its id, tags and links."
    if result.edges_skipped:
        note += f" {len(result.edges_skipped)} link(s) could not come back (the other end is gone)."
    messages.success(request, note)
    return redirect("ui:memory", memory_id=result.memory.pk)
