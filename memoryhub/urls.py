from django.contrib import admin
from django.urls import include, path, re_path

from apps.core.metrics import metrics_view
from apps.core.views import healthz
from apps.mcp import discovery

OAUTH_PATHS = (
    r"^\.well-known/(?:oauth-authorization-server|openid-configuration)(?:/.*)?$",
    r"^(?:register|authorize|token)/?$",
)

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("metrics", metrics_view, name="metrics"),
    re_path(r"^\.well-known/oauth-protected-resource(?:/.*)?$", discovery.protected_resource),
    *[re_path(pattern, discovery.no_oauth) for pattern in OAUTH_PATHS],
    path("admin/", admin.site.urls),
    path("api/", include("apps.api.urls")),
    path("", include("apps.ui.urls")),
]

handler404 = "apps.core.errors.page_not_found"
handler500 = "apps.core.errors.server_error"
