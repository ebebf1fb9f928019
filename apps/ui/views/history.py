"""A memory's history with readable diffs and "restore this version"; the namespace's trash."""

from __future__ import annotations

import json
import re
from datetime import UTC

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import dateformat, timezone
from django.utils.dateparse import parse_datetime
from django.views.decorators.http import require_POST

from apps.core.exceptions import ValidationFailed
from apps.core.values import is_uuid
from apps.history.conf import history_settings
from apps.history.diff import TEXT_FIELDS, word_diff
from apps.history.models import Action as Change
from apps.history.models import MemoryRevision
from apps.history.selectors import revisions_for_memory, trash_for_namespace
from apps.history.services import change_undoable, revision_restore, revision_undo, trash_restore
from apps.memories.models import Memory, Namespace
from apps.memories.revisions import memory_state
from apps.memories.services import (
    memory_delete,
    memory_refresh_undo,
    refresh_revision,
    supersede_undo,
    supersede_undoable,
)
from apps.queues.services import decision_undo, decision_undoable, merge_revision, merge_undo

from ..templatetags.stale_nav import forget_counts
from ..view_permissions import Action, can, memory_view, namespace_view
from .common import counted, safe_next, writer

HISTORY_PAGE = 50
TRASH_PAGE = 100


# Revisions that leave a version of the memory's fields behind (links and deletions do not).
VERSION_ACTIONS = set(Change.values) - {
    Change.LINK,
    Change.UNLINK,
    Change.DELETE,
    Change.DECISION,
}
# The undo button's words per kind of undo.
UNDO_LABELS = {
    "merge": "Undo this merge",
    "refresh": "Undo this refresh",
    "decision": "Undo this decision",
    "change": "Undo this change",
    "creation": "Undo this creation (to the trash)",
    "supersede": "Re-open this memory (undo the supersession)",
}
# A decision that ended this memory (another one was kept) re-opens it when undone.
QUEUE_NAMES = {"duplicates": "near-duplicates", "review": "review"}
REOPENING_DECISION = "Undo this decision (re-open this memory)"
OUTCOMES = {
    "kept_both": "kept both (not duplicates)",
    "superseded": "marked as superseded",
    "kept_one": "kept one of the two",
    "resolved": "marked resolved",
}
EMPTY = (None, "", [], {}, False)
# A recorded field as the page names it (others: the field name with spaces).
FIELD_LABELS = {
    "edge": "link",
    "edges_moved": "links",
    "merged": "merged in",
    "pagerank_score": "PageRank",
    "last_accessed_at": "last used",
    "trigger_phrases": "triggers",
}
# How the history shows an instant: in the server's time zone, to the minute.
MOMENT_FORMAT = "j M Y, H:i"
ISO_MOMENT = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}")
# Recorded fields that hold instants (as ISO 8601 text in the revision).
MOMENT_FIELDS = {"valid_from", "valid_until", "last_accessed_at", "created_at", "updated_at"}


def moment_shown(value: str) -> str:
    """An ISO 8601 instant as a person reads it ("28 Nov 2026, 20:03"); other text as it is."""
    try:
        moment = parse_datetime(value) if ISO_MOMENT.match(value) else None
    except ValueError:  # well formed but no real instant: shown as recorded
        moment = None
    if moment is None:
        return value
    if timezone.is_naive(moment):
        moment = moment.replace(tzinfo=UTC)  # revisions keep instants in UTC
    return dateformat.format(timezone.localtime(moment), MOMENT_FORMAT)


def _shown(value):
    """A field value as a person reads it: lists joined, objects as JSON, flags as yes/no."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or "—"
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False) if value else "—"
    return value


def field_changes(revision: MemoryRevision, names: dict[str, str] | None = None) -> list[dict]:
    """What one revision changed, from its own before/after: per field the old and new value,
    and for text a word diff. A creation lists only the fields it filled in. Other memories
    (a link's ends, the memories a merge folded in) are named by `names` (id -> title)."""
    names = names or {}
    before, after = revision.before or {}, revision.after or {}
    rows = []
    for name in sorted(set(before) | set(after)):
        old, new = before.get(name), after.get(name)
        if revision.before is None and name != "edge" and new in EMPTY:
            continue
        shown = (old, new) if name == "edge" else (_shown(old), _shown(new))
        if name in MOMENT_FIELDS:
            shown = tuple(moment_shown(v) if isinstance(v, str) else v for v in shown)
        if name == "edges_moved":
            shown = (None, f"{counted(len(new or []), 'link')} moved to this memory")
        if name == "decision":
            shown = (None, _decision_text(new) or _decision_text(old, undone=True))
        if name == "merged":
            shown = (None, [_named(i, names) for i in new or []])
        if name == "superseded_by":
            shown = (None, _named(new, names) if new else None)
        label = FIELD_LABELS.get(name, name.replace("_", " "))
        row = {"name": name, "label": label, "before": shown[0], "after": shown[1], "words": []}
        if name == "edge":
            row["edge"] = _named_edge(new or old, names)
        if name in TEXT_FIELDS and revision.before is not None and revision.after is not None:
            row["words"] = word_diff(old or "", new or "")
        rows.append(row)
    return rows


def _named(memory_id: str, names: dict[str, str]) -> dict:
    """A memory another revision mentions: its id and title (a deleted one by its short id)."""
    return {"id": memory_id, "title": names.get(memory_id), "short": str(memory_id)[:8]}


def _named_edge(edge: dict | None, names: dict[str, str]) -> dict | None:
    if not edge:
        return None
    return {
        "relation": edge.get("relation", ""),
        "source": _named(edge.get("source", ""), names),
        "target": _named(edge.get("target", ""), names),
    }


def _mentioned(revisions: list[MemoryRevision], namespace_id: int) -> dict[str, str]:
    """id -> title of every memory the revisions mention (link ends, merged memories), in one
    query; memories deleted since, or of another namespace, are left out (shown by their short
    id)."""
    ids = set()
    for r in revisions:
        for state in (r.before or {}, r.after or {}):
            edge = state.get("edge") or {}
            ids.update(str(edge[end]) for end in ("source", "target") if edge.get(end))
            ids.update(str(i) for i in state.get("merged") or [])
            if state.get("superseded_by"):
                ids.add(str(state["superseded_by"]))
    ids = [i for i in ids if is_uuid(i)]
    if not ids:
        return {}
    rows = Memory.objects.filter(pk__in=ids, namespace_id=namespace_id).only(
        "id", "title", "content"
    )
    return {str(m.pk): m.display_title for m in rows}


def _decision_text(decision: dict | None, *, undone: bool = False) -> str | None:
    if not decision:
        return None
    queue = QUEUE_NAMES.get(decision["queue"], "conflicts")
    text = f"{queue} queue: {OUTCOMES.get(decision['outcome'], decision['outcome'])}"
    if decision.get("note"):
        text += f" (note: {decision['note']})"
    return f"undone ({text}); back in the queue" if undone else text


def history_rows(memory: Memory, limit: int) -> list[dict]:
    """One row per revision, newest first, each with at most one undo: a supersession that a
    queue decision made is undone with that decision (which also puts the pair back in its
    queue), so only the decision offers it."""
    revisions = list(revisions_for_memory(memory)[:limit])
    current = memory_state(memory)
    names = _mentioned(revisions, memory.namespace_id)
    rows = []
    ended_by_decision: set[str] = set()  # successors kept by a decision still in effect
    for r in revisions:
        kind = _undo_kind(r, current, memory)
        label = UNDO_LABELS.get(kind, "")
        kept = ((r.after or {}).get("decision") or {}).get("kept")
        if kind == "decision" and kept and kept != str(memory.pk):
            ended_by_decision.add(kept)
            label = REOPENING_DECISION
        with_decision = kind == "supersede" and _successor(r) in ended_by_decision
        if with_decision:
            kind = label = ""
        rows.append(
            {
                "revision": r,
                "changes": field_changes(r, names),
                # A supersession's own version is never the way back: its undo is.
                "is_version": r.action in VERSION_ACTIONS and r.action != Change.SUPERSEDE,
                "undo": kind,
                "undo_label": label,
                "undone_with_decision": with_decision,
            }
        )
    return rows


def _successor(revision: MemoryRevision) -> str | None:
    return (revision.after or {}).get("superseded_by")


def _undo_kind(revision: MemoryRevision, current: dict, memory: Memory) -> str:
    """Which undo this revision offers: a merge (the merged memories and moved links come
    back), a refresh (stability and last use), a queue decision (the pair or conflict opens
    again), a creation (to the trash), or a field change while the memory still holds it."""
    if merge_revision(revision):
        return "merge"
    if refresh_revision(revision):
        return "refresh"
    if revision.action == Change.DECISION:
        return "decision" if decision_undoable(revision) else ""
    if revision.action == Change.CREATE:
        return "creation"
    if revision.action == Change.SUPERSEDE:
        return "supersede" if supersede_undoable(revision, memory) else ""
    if change_undoable(revision, current):
        return "change"
    return ""


@memory_view(Action.CHANGE)
@require_POST
def undo_change(request: HttpRequest, memory: Memory, revision_id: int) -> HttpResponse:
    revision = revisions_for_memory(memory).filter(pk=revision_id).first()
    kind = _undo_kind(revision, memory_state(memory), memory) if revision is not None else ""
    if not kind:
        raise Http404("No such change to undo on this memory.")
    who = writer(request)
    try:
        if kind == "merge":
            back = merge_undo(revision=revision, **who)
            messages.success(
                request,
                f"Merge undone: {counted(len(back), 'memory,memories')} came back with their links "
                "(each step recorded as a revision).",
            )
        elif kind == "refresh":
            memory_refresh_undo(memory=memory, before=revision.before, **who)
            messages.success(request, "Refresh undone: stability and last use are back.")
        elif kind == "decision":
            decision = decision_undo(revision=revision, **who)
            forget_counts(memory.namespace.name)
            reopened = decision.get("kept") not in (None, str(memory.pk))
            if decision.get("queue") == "recheck":
                done = "Decision undone: it is back in the Re-check queue."
            elif reopened:
                done = (
                    "Decision undone. Re-opened: this memory is valid again; the pair is back "
                    "in its queue."
                )
            else:
                done = "Decision undone: the pair is back in its queue."
            messages.success(request, done)
        elif kind == "supersede":
            supersede_undo(revision=revision, **who)
            messages.success(request, "Re-opened: the memory is valid again and current.")
        elif kind == "creation":
            memory_delete(memory=memory, **who)
            forget_counts(memory.namespace.name)
            messages.success(request, "Creation undone: the memory is in the trash.")
            return redirect("ui:trash", namespace=memory.namespace.name)
        else:
            revision_undo(revision=revision, **who)
            forget_counts(memory.namespace.name)
            messages.success(request, "Change undone (recorded as a new revision).")
    except ValidationFailed as exc:
        messages.error(request, exc.summary())
    # A queue's own Undo (the Re-check banner) returns to its queue.
    return redirect(safe_next(request, reverse("ui:history", kwargs={"memory_id": memory.pk})))


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
        skipped = len(result.edges_skipped)
        note += f" {counted(skipped, 'link')} could not come back (the other end is gone)."
    messages.success(request, note)
    return redirect("ui:memory", memory_id=result.memory.pk)
