"""Tags, namespaces, stats and search feedback."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from apps.access.permissions import Action
from apps.access.scoping import namespace_for, visible_namespaces
from apps.memories import selectors as memory_selectors
from apps.search import selectors as search_selectors
from apps.search.feedback import feedback_record

from ..pagination import StrictLimitOffsetPagination
from ..serializers import (
    FeedbackIn,
    FeedbackOut,
    NamespaceOut,
    StatsOut,
    TagFilterIn,
    TagOut,
)
from .base import TokenApiView


def _scope(view: TokenApiView, name: str | None) -> list:
    return [namespace_for(view.token, name)] if name else visible_namespaces(view.token)


class TagListApi(TokenApiView):
    pagination_class = StrictLimitOffsetPagination

    @extend_schema(operation_id="tags_list", parameters=[TagFilterIn], responses=TagOut(many=True))
    def get(self, request):
        filters = self.parse(TagFilterIn, request.query_params)
        tags = memory_selectors.tag_counts(namespaces=_scope(self, filters.get("namespace")))
        page = self.paginate_queryset(tags)
        return self.get_paginated_response(TagOut(page, many=True).data)


class NamespaceListApi(TokenApiView):
    @extend_schema(operation_id="namespaces_list", responses=NamespaceOut(many=True))
    def get(self, request):
        summaries = memory_selectors.namespace_summaries(principal=self.token)
        return Response(NamespaceOut(summaries, many=True).data)


class StatsApi(TokenApiView):
    @extend_schema(operation_id="stats", parameters=[TagFilterIn], responses=StatsOut)
    def get(self, request):
        filters = self.parse(TagFilterIn, request.query_params)
        rows = search_selectors.namespace_stats(namespaces=_scope(self, filters.get("namespace")))
        return Response(StatsOut({"namespaces": rows}).data)


class FeedbackApi(TokenApiView):
    @extend_schema(
        operation_id="feedback_create",
        request=FeedbackIn,
        responses=FeedbackOut,
        summary="Say whether a search (by its query_log_id) and its results were useful.",
    )
    def post(self, request):
        data = self.parse(FeedbackIn, request.data)
        log_id = data["query_log_id"]
        log = search_selectors.query_log_for(self.token, log_id, action=Action.FEEDBACK)
        log = feedback_record(
            query_log_id=log.pk,
            namespace=log.namespace,
            was_useful=data.get("was_useful"),
            result_feedback=data.get("result_feedback"),
        )
        return Response(
            FeedbackOut(
                {
                    "query_log_id": log.pk,
                    "was_useful": log.was_useful,
                    "result_feedback": log.result_feedback,
                }
            ).data
        )
