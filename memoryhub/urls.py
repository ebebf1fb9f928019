from django.contrib import admin
from django.urls import include, path

from apps.core.metrics import metrics_view
from apps.core.views import healthz

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("metrics", metrics_view, name="metrics"),
    path("admin/", admin.site.urls),
    path("api/", include("apps.api.urls")),
    path("", include("apps.ui.urls")),
]
