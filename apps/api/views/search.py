"""Search: the same parameters as the MCP memory_search tool, as query string or JSON body."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from apps.access.scoping import namespace_for
from apps.search.services import render_markdown, search

from ..serializers import SearchIn, SearchOut
from .base import TokenApiView


class SearchApi(TokenApiView):
    def _search(self, params: dict) -> Response:
        namespace = namespace_for(self.token, params.pop("namespace", None))
        budget = params.pop("token_budget", None)
        response = search(namespace=namespace, token_budget=budget, **params)
        body = response.to_dict()
        body["text"] = render_markdown(response, token_budget=budget)
        return Response(body)

    @extend_schema(operation_id="search_get", parameters=[SearchIn], responses=SearchOut)
    def get(self, request):
        return self._search(self.parse(SearchIn, request.query_params))

    @extend_schema(operation_id="search", request=SearchIn, responses=SearchOut)
    def post(self, request):
        return self._search(self.parse(SearchIn, request.data))
