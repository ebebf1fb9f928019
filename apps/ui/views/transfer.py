"""Import and export of a namespace in the browser.

Import (editors): the upload becomes a background run (apps.transfer.import_runs) whose progress
the page polls with htmx; a rejected file writes nothing and lists its bad lines. Export (anyone
who can see the namespace): JSONL or a zip of markdown notes, of the whole namespace or of the
browse page's current filters, streamed in keyset batches so its size does not matter.
"""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_POST

from apps.core.exceptions import ValidationFailed
from apps.core.streaming import in_thread
from apps.memories import dialog, unindexed
from apps.memories.models import Memory, Namespace
from apps.transfer import import_runs, importers
from apps.transfer.exporting import export_jsonl, export_markdown_zip, export_records

from ..forms import BrowseForm
from ..view_permissions import Action, can, namespace_view
from .browse import filtered_memories


def _context(request: HttpRequest, namespace: Namespace, **extra) -> dict:
    return {
        "namespace": namespace,
        "can_change": can(request.user, namespace, Action.CHANGE),
        "formats": importers.FORMATS,
        "total": Memory.objects.filter(namespace=namespace).count(),
        **extra,
    }


@namespace_view(Action.VIEW)
def transfer_page(request: HttpRequest, namespace: Namespace) -> HttpResponse:
    return render(request, "ui/transfer/page.html", _context(request, namespace))


@namespace_view(Action.CHANGE)
@require_POST
def import_start(request: HttpRequest, namespace: Namespace) -> HttpResponse:
    upload = request.FILES.get("file")
    fmt = request.POST.get("format") or "auto"
    try:
        if upload is None:
            raise ValidationFailed({"file": "Choose a file to import."})
        run = import_runs.start(upload=upload, namespace=namespace, user=request.user, fmt=fmt)
    except ValidationFailed as exc:
        errors = [import_runs.problem_line(k, v, set()) for k, v in exc.errors.items()]
        context = _context(request, namespace, upload_errors=errors)
        template = (
            "ui/transfer/partials/upload_error.html" if request.htmx else "ui/transfer/page.html"
        )
        return render(request, template, context, status=400)
    return _run_response(request, namespace, run)


@namespace_view(Action.CHANGE)
def import_progress(request: HttpRequest, namespace: Namespace, run_id: str) -> HttpResponse:
    return _run_response(request, namespace, _own_run(request, namespace, run_id))


@namespace_view(Action.CHANGE)
@require_POST
def import_cancel(request: HttpRequest, namespace: Namespace, run_id: str) -> HttpResponse:
    """Stop a running import before its next batch; what was written stays (see the report)."""
    run = _own_run(request, namespace, run_id)
    if run["phase"] in import_runs.RUNNING:
        import_runs.cancel(run_id)
        run["cancelling"] = True
    return _run_response(request, namespace, run)


def _own_run(request: HttpRequest, namespace: Namespace, run_id: str) -> dict:
    run = import_runs.load(run_id)
    if run is None or run["namespace"] != namespace.name or run["user"] != request.user.pk:
        raise Http404("No such import.")
    return run


def _run_response(request: HttpRequest, namespace: Namespace, run: dict) -> HttpResponse:
    context = {
        "namespace": namespace,
        "run": run,
        "running": run["phase"] in import_runs.RUNNING,
        "rate": import_runs.rate(run),
        "percent": int(100 * run["done"] / run["total"]) if run["total"] else 0,
    }
    if run["phase"] == "done":
        context["following"] = _following(namespace)
    if request.htmx:
        return render(request, "ui/transfer/partials/run.html", context)
    return render(request, "ui/transfer/page.html", {**_context(request, namespace), **context})


def _following(namespace: Namespace) -> dict | None:
    """What a large import left to the background jobs of this namespace: dialog turns waiting
    for their previous-turn passages, memories waiting for the HNSW index (docs/jobs.md)."""
    turns = dialog.queued([namespace.pk])
    vectors = unindexed.waiting([namespace.pk])
    return {"turns": turns, "vectors": vectors} if turns or vectors else None


def _selection(request: HttpRequest, namespace: Namespace):
    """The browse page's filters from the query string; none given = the whole namespace."""
    params = request.GET.copy()
    params.pop("cursor", None)
    params.pop("sort", None)
    if not any(params.values()):
        return Memory.objects.filter(namespace=namespace), False
    form = BrowseForm(params)
    data = form.cleaned_data if form.is_valid() else {}
    return filtered_memories(namespace, data), True


def _filename(namespace: Namespace, selected: bool, suffix: str) -> str:
    stamp = timezone.now().strftime("%Y%m%d-%H%M")
    return f"{namespace.name}{'-selection' if selected else ''}-{stamp}.{suffix}"


@namespace_view(Action.VIEW)
def export_jsonl_view(request: HttpRequest, namespace: Namespace) -> StreamingHttpResponse:
    queryset, selected = _selection(request, namespace)
    response = StreamingHttpResponse(
        in_thread(export_jsonl(export_records(queryset=queryset))),
        content_type="application/x-ndjson",
    )
    name = _filename(namespace, selected, "jsonl")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@namespace_view(Action.VIEW)
def export_markdown_view(request: HttpRequest, namespace: Namespace) -> StreamingHttpResponse:
    queryset, selected = _selection(request, namespace)
    response = StreamingHttpResponse(
        in_thread(export_markdown_zip(export_records(queryset=queryset))),
        content_type="application/zip",
    )
    name = _filename(namespace, selected, "zip")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
