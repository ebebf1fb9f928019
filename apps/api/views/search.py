"""Search: the same parameters as the MCP memory_search tool, as query string or JSON body.
Answers JSON, or with `Accept: text/markdown` the tool's own text (docs/session-start.md)."""

from __future__ import annotations

from django.utils.cache import patch_vary_headers
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response

from apps.access.scoping import namespace_for
from apps.search.services import render_markdown, search

from ..renderers import MarkdownRenderer
from ..serializers import SearchIn, SearchOut
from .base import TokenApiView

RESPONSES = {
    (200, "application/json"): SearchOut,
    (200, "text/markdown"): OpenApiTypes.STR,
}


class SearchApi(TokenApiView):
    renderer_classes = [JSONRenderer, MarkdownRenderer]  # the first is the default

    def _search(self, params: dict) -> Response:
        namespace = namespace_for(self.token, params.pop("namespace", None))
        budget = params.pop("token_budget", None)
        response = search(namespace=namespace, token_budget=budget, **params)
        text = render_markdown(response, token_budget=budget)
        if self.request.accepted_renderer.format == MarkdownRenderer.format:
            return Response(text)
        body = response.to_dict()
        body["text"] = text
        return Response(body)

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        patch_vary_headers(response, ["Accept"])  # one URL, two representations
        return response

    @extend_schema(operation_id="search_get", parameters=[SearchIn], responses=RESPONSES)
    def get(self, request):
        return self._search(self.parse(SearchIn, request.query_params))

    @extend_schema(operation_id="search", request=SearchIn, responses=RESPONSES)
    def post(self, request):
        return self._search(self.parse(SearchIn, request.data))
