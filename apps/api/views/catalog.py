"""Tags, namespaces, stats and search feedback."""

from __future__ import annotations

from django.db.models import Count, Q
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from apps.access.permissions import Action
from apps.access.scoping import namespace_for, visible_namespaces
from apps.memories.models import CausalEdge, Memory, Tag
from apps.search.models import QueryLog

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
        tags = (
            Tag.objects.filter(
                memories__namespace__in=_scope(self, filters.get("namespace")),
                memories__archived=False,
            )
            .annotate(count=Count("memories", distinct=True))
            .order_by("name")
            .values("name", "count")
        )
        page = self.paginate_queryset(tags)
        return self.get_paginated_response(TagOut(page, many=True).data)


class NamespaceListApi(TokenApiView):
    @extend_schema(operation_id="namespaces_list", responses=NamespaceOut(many=True))
    def get(self, request):
        namespaces = visible_namespaces(self.token)
        counts = dict(
            Memory.objects.filter(namespace__in=namespaces, archived=False)
            .values_list("namespace")
            .annotate(n=Count("id"))
        )
        data = [
            {
                "name": ns.name,
                "description": ns.description,
                "memory_count": counts.get(ns.pk, 0),
                "writable": not self.token.read_only,
            }
            for ns in namespaces
        ]
        return Response(NamespaceOut(data, many=True).data)


class StatsApi(TokenApiView):
    @extend_schema(operation_id="stats", parameters=[TagFilterIn], responses=StatsOut)
    def get(self, request):
        filters = self.parse(TagFilterIn, request.query_params)
        namespaces = _scope(self, filters.get("namespace"))
        memories = _by_namespace(
            Memory.objects.filter(namespace__in=namespaces),
            n_memories=Count("id", distinct=True, filter=Q(archived=False)),
            n_archived=Count("id", distinct=True, filter=Q(archived=True)),
            n_tags=Count("tags", distinct=True, filter=Q(archived=False)),
        )
        edges = _by_namespace(
            CausalEdge.objects.filter(namespace__in=namespaces), n_edges=Count("id")
        )
        searches = _by_namespace(
            QueryLog.objects.filter(namespace__in=namespaces),
            n_searches=Count("id"),
            n_searches_with_feedback=Count("id", filter=Q(feedback_at__isnull=False)),
            n_evidence_gaps=Count("id", filter=Q(evidence_gap=True)),
        )
        rows = []
        for ns in namespaces:
            row = {"namespace": ns.name, "memories": 0, "archived": 0, "tags": 0, "edges": 0}
            row.update(searches=0, searches_with_feedback=0, evidence_gaps=0)
            for table in (memories, edges, searches):
                row.update(table.get(ns.pk, {}))
            rows.append(row)
        return Response(StatsOut({"namespaces": rows}).data)


def _by_namespace(queryset, **aggregates) -> dict[int, dict]:
    """{namespace id: {name: value}}; aggregate names carry an "n_" prefix so they never
    shadow a model field (which would turn a FILTER clause into an aggregate of an aggregate)."""
    rows = queryset.values("namespace").annotate(**aggregates).order_by()
    return {row["namespace"]: {k[2:]: row[k] for k in aggregates} for row in rows}


class FeedbackApi(TokenApiView):
    @extend_schema(
        operation_id="feedback_create",
        request=FeedbackIn,
        responses=FeedbackOut,
        summary="Say whether a search (by its query_log_id) and its results were useful.",
    )
    def post(self, request):
        from apps.search.feedback import feedback_record
        from apps.search.selectors import query_log_for

        data = self.parse(FeedbackIn, request.data)
        log = query_log_for(self.token, data["query_log_id"], action=Action.FEEDBACK)
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
