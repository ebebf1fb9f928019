"""Causal edges between memories of one namespace."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response

from apps.access.permissions import Action
from apps.access.scoping import edge_for, memory_for, namespace_for
from apps.memories import selectors, services

from ..pagination import StrictLimitOffsetPagination
from ..serializers import EdgeFilterIn, EdgeIn, EdgeOut
from .base import TokenApiView


class EdgeListCreateApi(TokenApiView):
    pagination_class = StrictLimitOffsetPagination

    @extend_schema(
        operation_id="edges_list", parameters=[EdgeFilterIn], responses=EdgeOut(many=True)
    )
    def get(self, request):
        filters = self.parse(EdgeFilterIn, request.query_params)
        name = filters.get("namespace")
        edges = selectors.edge_list(
            principal=self.token,
            namespace=namespace_for(self.token, name) if name else None,
            memory=filters.get("memory"),
            relation=filters.get("relation", ""),
        )
        page = self.paginate_queryset(edges)
        return self.get_paginated_response(EdgeOut(page, many=True).data)

    @extend_schema(
        operation_id="edges_create",
        request=EdgeIn,
        responses={201: EdgeOut},
        summary="Link two memories (linking again updates the strength).",
    )
    def post(self, request):
        data = self.parse(EdgeIn, request.data)
        source = memory_for(self.token, data["source"], action=Action.CHANGE, field="source")
        target = memory_for(self.token, data["target"], action=Action.CHANGE, field="target")
        edge = services.edge_create(
            source=source,
            target=target,
            relation=data["relation"],
            strength=data["strength"],
            actor=self.token,
            door="rest",
        )
        return Response(EdgeOut(edge).data, status=status.HTTP_201_CREATED)


class EdgeDetailApi(TokenApiView):
    @extend_schema(operation_id="edges_read", responses=EdgeOut)
    def get(self, request, pk):
        return Response(EdgeOut(edge_for(self.token, pk)).data)

    @extend_schema(operation_id="edges_delete", responses={204: None})
    def delete(self, request, pk):
        edge = edge_for(self.token, pk, action=Action.CHANGE)
        services.edge_delete(edge=edge, actor=self.token, door="rest")
        return Response(status=status.HTTP_204_NO_CONTENT)
