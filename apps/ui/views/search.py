"""`/`: the search page, its explain view, feedback on results."""

from __future__ import annotations

import uuid

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_POST

from apps.core.exceptions import NotFound, ValidationFailed
from apps.memories.browse import summaries
from apps.memories.models import Memory
from apps.search import querylog
from apps.search.feedback import feedback_record
from apps.search.selectors import evidence_gap_model
from apps.search.services import search

from ..forms import SearchForm, attach_errors
from ..templatetags.ui import memory_title
from ..view_permissions import (
    Action,
    can,
    current_namespace,
    memory_or_404,
    namespace_or_404,
    visible_namespaces,
)
from .common import pick, uuids

STRATEGIES = ("keyword", "semantic", "graph", "exact")
# What the evidence-gap model reads (apps/search/pipeline/confidence.py), in words.
SIGNAL_LABELS = {
    "top_cosine": "Meaning match of the best result (cosine to the query)",
    "coverage": "Share of the query's rare words the best keyword match holds",
    "missing": "Share of the query's rare words no memory has",
    "agreement": "Best result found high by both keyword and semantic search",
    "z": "How far the best score stands above the rest",
    "margin": "Lead of the first result over the second",
}


def _run(request: HttpRequest, *, include_debug: bool) -> dict:
    names = list(visible_namespaces(request.user).values_list("name", flat=True))
    namespace = current_namespace(request, request.GET.get("namespace") or None)
    data = request.GET.copy()
    if namespace is not None:
        data["namespace"] = namespace.name
    form = SearchForm(data, namespaces=names)
    context = {"form": form, "namespace": namespace, "response": None, "results": []}
    if namespace is not None:
        request.session["ui_namespace"] = namespace.name
    if namespace is None or not form.is_valid() or not form.has_search():
        return context
    try:
        response = search(
            namespace=namespace,
            include_debug=include_debug,
            log=not include_debug,
            **form.search_arguments(),
        )
    except ValidationFailed as exc:
        attach_errors(form, exc, {"query": "q"})
        return context
    extra = summaries([m["id"] for m in response.memories])
    contradicted = {i for pair in response.flags.get("contradictions", []) for i in pair}
    context.update(
        response=response,
        results=[
            {**m, **extra.get(m["id"], {}), "contradicted": m["id"] in contradicted}
            for m in response.memories
        ],
        reordered=reordered(response.memories),
        can_feedback=can(request.user, namespace, Action.FEEDBACK),
        can_change=can(request.user, namespace, Action.CHANGE),
        query_string=request.GET.urlencode(),
    )
    return context


@login_required
def search_page(request: HttpRequest) -> HttpResponse:
    context = _run(request, include_debug=False)
    template = pick(request, "ui/search/page.html", "ui/search/partials/results.html")
    return render(request, template, context)


@login_required
def explain_page(request: HttpRequest) -> HttpResponse:
    """Why each result ranked: the search service's own debug output for the same request."""
    context = _run(request, include_debug=True)
    response = context["response"]
    rows = []
    if response is not None and response.debug:
        debug = response.debug
        explained = {r["id"]: r for r in debug.get("results", [])}
        titles = _titles(context["results"], debug.get("moves", {}))
        for position, m in enumerate(context["results"], start=1):
            r = explained.get(m["id"], {})
            ranks, scores = r.get("ranks", m.get("why", {})), r.get("scores", {})
            rows.append(
                {
                    "position": position,
                    "memory": m,
                    "strategies": [
                        (s, {"rank": ranks[s], "score": scores.get(s)} if s in ranks else None)
                        for s in STRATEGIES
                    ],
                    "fused": r.get("fused"),
                    "boosts": r.get("boosts", []),
                    "reasons": r.get("reasons", []),
                    "positions": r.get("positions", {}),
                }
            )
        context["moves"] = {
            step: [{**move, "title": titles.get(move["id"], move["id"])} for move in moved]
            for step, moved in debug.get("moves", {}).items()
        }
        known = {
            "intent",
            "intent_scores",
            "entities",
            "time_phrase",
            "query_time_range",
            "filters",
            "weights",
            "adapted_weights",
            "learned_weights",
            "weight_rules",
            "thresholds",
            "fallback_retry",
            "fusion",
            "disabled_stages",
            "stage_timings_ms",
            "embedding_model",
            "candidates",
            "pool_size",
            "top_z",
            "latency_ms",
            "results",
            "moves",
            "why_path",
        }
        other = {k: v for k, v in response.debug.items() if k not in known}
        context["signals"] = _signals(other.pop("confidence_signals", None))
        context["signal_intercept"] = evidence_gap_model().intercept
        context["other_debug"] = other
    context.update(rows=rows, strategies=STRATEGIES)
    return render(request, "ui/search/explain.html", context)


def reordered(memories: list[dict]) -> bool:
    """Did diversity or MMR put a lower score above a higher one? Then the page says that the
    ranks are not the scores' order (the explain view shows each step)."""
    scores = [m.get("score") or 0 for m in memories]
    return any(a < b for a, b in zip(scores, scores[1:], strict=False))


def _titles(results: list[dict], moves: dict) -> dict[str, str]:
    """id -> title of the results and of what diversity or MMR moved out of them."""
    titles = {m["id"]: memory_title(m) for m in results}
    missing = {move["id"] for moved in moves.values() for move in moved} - set(titles)
    for m in Memory.objects.filter(pk__in=uuids(list(missing))).only("id", "title", "content"):
        titles[str(m.pk)] = m.display_title
    return titles


def _signals(signals: dict | None) -> list[dict]:
    """The evidence-gap model's inputs as rows: what each means, its value, its weight."""
    if not isinstance(signals, dict):
        return []
    coefficients = evidence_gap_model().coefficients
    return [
        {
            "name": name,
            "label": SIGNAL_LABELS.get(name, name),
            "value": value,
            "coefficient": coefficients.get(name),
            "contribution": value * coefficients[name] if name in coefficients else None,
        }
        for name, value in signals.items()
    ]


@login_required
@require_POST
def feedback(request: HttpRequest) -> HttpResponse:
    """A verdict on one result of one search, through the same path as MCP and REST."""
    namespace = namespace_or_404(request.user, request.POST.get("namespace", ""), Action.FEEDBACK)
    memory_id = request.POST.get("memory_id", "")
    useful = request.POST.get("useful") == "1"
    error = ""
    try:
        uuid.UUID(memory_id)
        querylog.flush()  # the search's log row is written by a background thread
        feedback_record(
            query_log_id=request.POST.get("query_log_id"),
            namespace=namespace,
            result_feedback={memory_id: useful},
        )
    except (ValidationFailed, NotFound, ValueError) as exc:
        error = str(exc)
    context = {"useful": useful, "error": error, "memory_id": memory_id}
    template = "ui/search/partials/feedback_done.html"
    return render(request, template, context, status=400 if error else 200)


@login_required
def similar_page(request: HttpRequest, memory_id) -> HttpResponse:
    """'Find similar': a semantic search for the memory's own text."""
    memory = memory_or_404(request.user, memory_id)
    text = (memory.title + "\n" + memory.content).strip()[:500]
    query = urlencode({"namespace": memory.namespace.name, "q": text, "mode": "semantic"})
    return redirect(f"{reverse('ui:search')}?{query}")
