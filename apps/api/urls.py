"""REST API under /api/v1/, its OpenAPI schema at /api/v1/schema/ and docs at /api/docs/."""

from __future__ import annotations

from django.http import JsonResponse
from django.urls import include, path, re_path
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from .views import catalog, edges, history, memories, search

v1 = [
    path("memories/", memories.MemoryListCreateApi.as_view(), name="memories"),
    path("memories/batch/", memories.MemoryBatchApi.as_view(), name="memories-batch"),
    path("memories/<str:pk>/", memories.MemoryDetailApi.as_view(), name="memory-detail"),
    path(
        "memories/<str:pk>/revisions/",
        history.MemoryRevisionListApi.as_view(),
        name="memory-revisions",
    ),
    path(
        "memories/<str:pk>/revisions/<int:revision>/restore/",
        history.MemoryRevisionRestoreApi.as_view(),
        name="memory-revision-restore",
    ),
    path("trash/", history.TrashListApi.as_view(), name="trash"),
    path("trash/<int:pk>/restore/", history.TrashRestoreApi.as_view(), name="trash-restore"),
    path("search/", search.SearchApi.as_view(), name="search"),
    path("edges/", edges.EdgeListCreateApi.as_view(), name="edges"),
    path("edges/<int:pk>/", edges.EdgeDetailApi.as_view(), name="edge-detail"),
    path("tags/", catalog.TagListApi.as_view(), name="tags"),
    path("namespaces/", catalog.NamespaceListApi.as_view(), name="namespaces"),
    path("stats/", catalog.StatsApi.as_view(), name="stats"),
    path("feedback/", catalog.FeedbackApi.as_view(), name="feedback"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
]

app_name = "api"
urlpatterns = [
    path("v1/", include(v1)),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api:schema"), name="docs"),
    re_path(r"^.*/$", csrf_exempt(lambda request, *a, **kw: _not_found(request)), name="404"),
]


def _not_found(request) -> JsonResponse:
    """Unknown API paths answer JSON like the rest of the API, not Django's HTML page."""
    return JsonResponse({"detail": f"No API endpoint at {request.path}."}, status=404)
