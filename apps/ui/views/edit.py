"""Create and edit forms, through memory_create / memory_update (the one write path)."""

from __future__ import annotations

from django.contrib import messages
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from apps.core.exceptions import PermissionDenied, ValidationFailed, VersionConflict
from apps.memories import services
from apps.memories.models import Memory, Namespace
from apps.memories.preview import create_preview
from apps.memories.tags import infer_tags
from apps.queues.recheck import recheck_confirm

from ..forms import MemoryForm, attach_errors, split_list
from ..view_permissions import Action, memory_view, namespace_view
from .common import counted, writer

PREFILLED = ("content", "title", "category", "tags", "file_path", "source", "supersedes")
DUPLICATE_CHOICES = {"keep": "report", "skip": "skip", "supersede": "supersede"}


@namespace_view(Action.CHANGE)
def create_page(request: HttpRequest, namespace: Namespace) -> HttpResponse:
    # Links may prefill the form (?content=...&title=...), e.g. from the missed-searches queue.
    initial = {k: request.GET[k] for k in PREFILLED if request.GET.get(k)}
    form = MemoryForm(request.POST or None, initial=initial)
    context = {"form": form, "namespace": namespace, "duplicates": None}
    if request.method == "POST" and form.is_valid():
        fields = form.service_fields(create=True)
        choice = request.POST.get("on_duplicate", "")
        try:
            if choice not in DUPLICATE_CHOICES:
                # Shown before writing, so the writer chooses; the create reuses its encoding.
                preview = create_preview(namespace=namespace, **fields)
                if preview.found:
                    similarity = preview.near_duplicates
                    near = Memory.objects.filter(pk__in=list(similarity))
                    context["duplicates"] = {
                        "exact": preview.duplicate_of,
                        "near": [(m, similarity[str(m.pk)]) for m in near],
                    }
                    return render(request, "ui/memory/form.html", context)
            result = services.memory_create(
                namespace=namespace,
                on_duplicate=DUPLICATE_CHOICES.get(choice, "report"),
                confirm_constitutional=request.POST.get("confirm_constitutional") == "1",
                **fields,
                **writer(request),
            )
        except ValidationFailed as exc:
            attach_errors(form, exc)
            # Superseding a constitutional memory: the page now offers the owner's box.
            context["confirm_rule"] = "confirm_constitutional" in exc.errors
            return render(request, "ui/memory/form.html", context, status=400)
        except PermissionDenied as exc:
            form.add_error(None, str(exc))
            return render(request, "ui/memory/form.html", context, status=403)
        if not result.created:
            messages.info(request, "Not stored again: this memory already holds that text.")
        else:
            messages.success(request, "Memory created.")
        if result.redacted:
            kinds = ", ".join(result.redacted)
            messages.warning(request, f"Stored with credentials replaced: {kinds}.")
        if result.inferred_tags:
            inferred = ", ".join(result.inferred_tags)
            messages.info(request, f"Tags inferred from the text: {inferred}")
        if result.chunks:
            messages.info(
                request,
                f"Stored as a document of {counted(len(result.chunks), 'chunk')}.",
            )
        if result.superseded:
            replaced = counted(len(result.superseded), "older memory,older memories")
            messages.info(request, f"Replaces {replaced} (now ended).")
        # The memory page shows each possible update with a Supersede button in place.
        if result.possible_updates or result.possible_contradictions:
            messages.warning(request, "This memory may change what an older one says: see below.")
        return redirect("ui:memory", memory_id=result.memory.pk)
    status = 400 if request.method == "POST" else 200
    return render(request, "ui/memory/form.html", context, status=status)


FIELD_LABELS = {
    "title": "Title",
    "content": "Content",
    "category": "Category",
    "tags": "Tags",
    "file_path": "File path",
    "source": "Source",
    "tier": "Tier",
    "importance": "Importance",
    "valid_from": "Valid from",
    "valid_until": "Valid until",
}


def _form_values(memory: Memory) -> dict:
    return {
        "title": memory.title,
        "content": memory.content,
        "category": memory.category,
        "tags": ", ".join(sorted(memory.tags.values_list("name", flat=True))),
        "file_path": memory.file_path,
        "source": memory.source,
        "tier": memory.tier,
        "importance": memory.importance,
        "valid_from": _day(memory.valid_from),
        "valid_until": _day(memory.valid_until),
    }


def _conflict(request: HttpRequest, memory: Memory, seen: int | None, fields: dict) -> HttpResponse:
    """Someone saved the memory after this form was filled: nothing is written; the page shows
    the stored values beside the submitted ones, and the form now carries the stored version,
    so saving again deliberately puts the submitted values over the others'."""
    stored = _form_values(memory)
    differing = []
    for name, label in FIELD_LABELS.items():
        theirs, mine = stored[name], fields.get(name)
        if name == "tags":
            if sorted(split_list(theirs)) == sorted(mine):
                continue
            mine = ", ".join(mine)
        elif theirs == mine or not (theirs or mine):  # an empty date is "" or None
            continue
        differing.append({"label": label, "theirs": theirs, "mine": mine})
    data = request.POST.copy()
    data["version"] = str(memory.version)
    form = MemoryForm(data)
    form.is_valid()
    context = {
        "form": form,
        "namespace": memory.namespace,
        "memory": memory,
        "conflict": {"seen": seen, "now": memory.version, "fields": differing},
    }
    return render(request, "ui/memory/form.html", context, status=409)


@memory_view(Action.CHANGE)
def edit_page(request: HttpRequest, memory: Memory) -> HttpResponse:
    current = _form_values(memory)
    form = MemoryForm(request.POST or None, initial={**current, "version": memory.version})
    # Opened from the Re-check queue: saving the edit also confirms the memory was re-checked.
    rechecking = (request.POST or request.GET).get("recheck") == "1"
    context = {
        "form": form,
        "namespace": memory.namespace,
        "memory": memory,
        "rechecking": rechecking,
    }
    if request.method == "POST" and form.is_valid():
        fields = form.service_fields()
        # The page always sends the version it was filled from; a client that sends none
        # (like REST without If-Match) changes whatever version is stored.
        seen = form.cleaned_data.get("version")
        if seen is not None and seen != memory.version:
            return _conflict(request, memory, seen, fields)
        before = {**current, "tags": split_list(current["tags"])}
        changes = {k: v for k, v in fields.items() if v != before[k] and (v or before[k])}
        links = form.link_fields()
        if changes or links or rechecking:
            try:
                with transaction.atomic():  # the links and the change, or neither
                    if changes:
                        memory = services.memory_update(
                            memory=memory,
                            expected_version=seen,
                            confirm_constitutional=request.POST.get("confirm_constitutional")
                            == "1",
                            **changes,
                            **writer(request),
                        )
                    services.memory_links_add(memory=memory, **links, **writer(request))
                    if rechecking and memory.recheck_marks.exists():
                        recheck_confirm(memory=memory, **writer(request))
                        changes["re-checked"] = True
            except VersionConflict as exc:  # saved by someone else a moment ago
                return _conflict(request, exc.current, seen, fields)
            except ValidationFailed as exc:
                attach_errors(form, exc)
                return render(request, "ui/memory/form.html", context, status=400)
            except PermissionDenied as exc:  # a constitutional memory and no owner
                form.add_error(None, str(exc))
                return render(request, "ui/memory/form.html", context, status=403)
            done = sorted([*changes, *links])
            if done:
                messages.success(request, "Saved: " + ", ".join(done) + ".")
            else:
                messages.info(request, "Nothing changed.")
        else:
            messages.info(request, "Nothing changed.")
        return redirect("ui:memory", memory_id=memory.pk)
    status = 400 if request.method == "POST" else 200
    return render(request, "ui/memory/form.html", context, status=status)


def _day(moment) -> str:
    return moment.date().isoformat() if moment else ""


@namespace_view(Action.VIEW)
def infer_tags_partial(request: HttpRequest, namespace: Namespace) -> HttpResponse:
    """htmx: the tags the write path will add to this text (shown while typing)."""
    given = split_list(request.GET.get("tags", ""))
    tags = infer_tags(request.GET.get("content", ""), request.GET.get("category", ""), given)
    return render(request, "ui/memory/partials/inferred_tags.html", {"inferred": tags})
