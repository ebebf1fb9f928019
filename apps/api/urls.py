"""REST API under /api/v1/, its OpenAPI schema at /api/v1/schema/ and docs at /api/docs/."""

from __future__ import annotations

from django.http import JsonResponse
from django.urls import include, path, re_path
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from .views import catalog, edges, history, memories, review, search


def _route(pattern: str, view, name: str):
    """A path whose trailing slash is optional: POST /api/v1/memories must not meet a 301."""
    return re_path(rf"^{pattern}/?$", view, name=name)


ID = r"(?P<pk>[^/]+)"
v1 = [
    _route("memories", memories.MemoryListCreateApi.as_view(), "memories"),
    _route("memories/batch", memories.MemoryBatchApi.as_view(), "memories-batch"),
    _route(f"memories/batch/{ID}", memories.MemoryBatchJobApi.as_view(), "memories-batch-job"),
    _route(f"memories/{ID}", memories.MemoryDetailApi.as_view(), "memory-detail"),
    _route(f"memories/{ID}/approve", review.MemoryApproveApi.as_view(), "memory-approve"),
    _route(f"memories/{ID}/reject", review.MemoryRejectApi.as_view(), "memory-reject"),
    _route(
        f"memories/{ID}/revisions",
        history.MemoryRevisionListApi.as_view(),
        "memory-revisions",
    ),
    _route(
        rf"memories/{ID}/revisions/(?P<revision>[0-9]+)/restore",
        history.MemoryRevisionRestoreApi.as_view(),
        "memory-revision-restore",
    ),
    _route("trash", history.TrashListApi.as_view(), "trash"),
    _route(r"trash/(?P<pk>[0-9]+)/restore", history.TrashRestoreApi.as_view(), "trash-restore"),
    _route("search", search.SearchApi.as_view(), "search"),
    _route("edges", edges.EdgeListCreateApi.as_view(), "edges"),
    _route(r"edges/(?P<pk>[0-9]+)", edges.EdgeDetailApi.as_view(), "edge-detail"),
    _route("tags", catalog.TagListApi.as_view(), "tags"),
    _route("namespaces", catalog.NamespaceListApi.as_view(), "namespaces"),
    _route(
        r"namespaces/(?P<name>[a-z0-9][a-z0-9_-]*)",
        review.NamespaceDetailApi.as_view(),
        "namespace-detail",
    ),
    _route("stats", catalog.StatsApi.as_view(), "stats"),
    _route("feedback", catalog.FeedbackApi.as_view(), "feedback"),
    _route("schema", SpectacularAPIView.as_view(), "schema"),
]

app_name = "api"
urlpatterns = [
    path("v1/", include(v1)),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api:schema"), name="docs"),
    re_path(r"^.*$", csrf_exempt(lambda request, *a, **kw: _not_found(request)), name="404"),
]


def _not_found(request) -> JsonResponse:
    """Unknown API paths answer JSON like the rest of the API, not Django's HTML page."""
    return JsonResponse({"detail": f"No API endpoint at {request.path}."}, status=404)
