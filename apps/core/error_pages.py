"""Project-wide error pages: JSON under /api/ (clients parse it), Django's pages elsewhere.

DRF's handler answers the errors it knows; anything else that escapes a view (a bug, a lost
database) reaches Django's handler500, which used to answer API clients with an HTML page.
"""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.views import defaults


def _is_api(request: HttpRequest) -> bool:
    return request.path_info.startswith("/api/")


def server_error(request: HttpRequest, template_name: str = "500.html"):
    if _is_api(request):
        return JsonResponse(
            {"detail": "Internal server error; the server logged the details."}, status=500
        )
    return defaults.server_error(request, template_name=template_name)


def page_not_found(request: HttpRequest, exception: Exception, template_name: str = "404.html"):
    if _is_api(request):
        return JsonResponse({"detail": f"No API endpoint at {request.path}."}, status=404)
    return defaults.page_not_found(request, exception, template_name=template_name)
