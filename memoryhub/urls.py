from django.contrib import admin
from django.urls import include, path, re_path

from apps.core.metrics import metrics_view
from apps.core.views import healthz
from apps.mcp import discovery
from apps.oauth.urls import page_patterns as oauth_pages
from apps.oauth.urls import protocol_patterns as oauth_protocol

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("metrics", metrics_view, name="metrics"),
    path("", include((oauth_protocol, "oauth2_provider"))),
    path("", include((oauth_pages, "oauth"))),
    re_path(
        r"^\.well-known/(?:openid-configuration|oauth-authorization-server/.+)$",
        discovery.elsewhere,
    ),
    path("admin/", admin.site.urls),
    path("api/", include("apps.api.urls")),
    path("", include("apps.ui.urls")),
]

handler404 = "apps.core.error_pages.page_not_found"
handler500 = "apps.core.error_pages.server_error"
