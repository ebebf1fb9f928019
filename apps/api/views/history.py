"""A memory's revisions, restoring a version, and the trash of deleted memories."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from apps.access.permissions import Action
from apps.access.scoping import memory_for, namespace_for
from apps.core.exceptions import NotFound
from apps.history import selectors, services
from apps.history.models import MemoryRevision, TrashEntry

from ..pagination import StrictLimitOffsetPagination
from ..serializers import MemoryOut
from .base import TokenApiView


class RevisionOut(serializers.ModelSerializer):
    namespace = serializers.SlugRelatedField(slug_field="name", read_only=True)
    actor = serializers.CharField(source="actor_label", read_only=True)
    actor_type = serializers.SerializerMethodField()

    class Meta:
        model = MemoryRevision
        fields = [
            "id",
            "memory_id",
            "namespace",
            "action",
            "door",
            "actor",
            "actor_type",
            "before",
            "after",
            "created_at",
        ]
        read_only_fields = fields

    def get_actor_type(self, revision) -> str:
        if revision.actor_token_id:
            return "token"
        return "user" if revision.actor_user_id else "system"


class TrashEntryOut(serializers.ModelSerializer):
    namespace = serializers.SlugRelatedField(slug_field="name", read_only=True)
    title = serializers.CharField(read_only=True)
    content = serializers.CharField(read_only=True)
    edge_count = serializers.SerializerMethodField()

    class Meta:
        model = TrashEntry
        fields = [
            "id",
            "memory_id",
            "namespace",
            "title",
            "content",
            "tags",
            "edge_count",
            "deleted_at",
            "deleted_by",
            "door",
        ]
        read_only_fields = fields

    def get_edge_count(self, entry) -> int:
        return len(entry.edges)


class TrashFilterIn(serializers.Serializer):
    namespace = serializers.CharField(required=False, max_length=100)


class TrashRestoreOut(serializers.Serializer):
    memory = MemoryOut()
    edges_restored = serializers.IntegerField()
    edges_skipped = serializers.ListField(child=serializers.DictField())


MEMORY_ID = OpenApiParameter("id", OpenApiTypes.UUID, OpenApiParameter.PATH)
REVISION_ID = OpenApiParameter("revision", OpenApiTypes.INT, OpenApiParameter.PATH)
ENTRY_ID = OpenApiParameter("pk", OpenApiTypes.INT, OpenApiParameter.PATH)


class MemoryRevisionListApi(TokenApiView):
    pagination_class = StrictLimitOffsetPagination

    @extend_schema(
        operation_id="memories_revisions",
        parameters=[MEMORY_ID],
        responses=RevisionOut(many=True),
        summary="A memory's revisions, newest first: who, which door, fields before and after.",
    )
    def get(self, request, pk):
        memory = memory_for(self.token, pk, field="id")
        revisions = selectors.revisions_for_memory(memory).select_related("namespace")
        page = self.paginate_queryset(revisions)
        return self.get_paginated_response(RevisionOut(page, many=True).data)


class MemoryRevisionRestoreApi(TokenApiView):
    @extend_schema(
        operation_id="memories_revisions_restore",
        parameters=[MEMORY_ID, REVISION_ID],
        request=None,
        responses=MemoryOut,
        summary="Make the memory look as it did right after this revision (itself a revision).",
    )
    def post(self, request, pk, revision):
        memory = memory_for(self.token, pk, action=Action.CHANGE, field="id")
        found = selectors.revision_of_memory(memory, revision)
        if found is None:
            raise NotFound(f"Revision {revision} of memory {memory.pk} does not exist.")
        restored = services.revision_restore(revision=found, actor=self.token, door="rest")
        restored = memory_for(self.token, restored.pk, field="id")  # fresh tags
        return Response(MemoryOut(restored).data)


class TrashListApi(TokenApiView):
    pagination_class = StrictLimitOffsetPagination

    @extend_schema(
        operation_id="trash_list",
        parameters=[TrashFilterIn],
        responses=TrashEntryOut(many=True),
        summary="Deleted memories of the token's namespaces that can still be restored.",
    )
    def get(self, request):
        filters = self.parse(TrashFilterIn, request.query_params)
        if filters.get("namespace"):
            entries = selectors.trash_for_namespace(namespace_for(self.token, filters["namespace"]))
        else:
            entries = TrashEntry.objects.restrict(self.token, Action.VIEW)
        page = self.paginate_queryset(
            entries.select_related("namespace").order_by("-deleted_at", "-id")
        )
        return self.get_paginated_response(TrashEntryOut(page, many=True).data)


class TrashRestoreApi(TokenApiView):
    @extend_schema(
        operation_id="trash_restore",
        parameters=[ENTRY_ID],
        request=None,
        responses=TrashRestoreOut,
        summary="Restore a deleted memory with its id, tags and edges.",
    )
    def post(self, request, pk):
        entry = selectors.trash_entry_for(self.token, pk, action=Action.CHANGE)
        result = services.trash_restore(entry=entry, actor=self.token, door="rest")
        memory = memory_for(self.token, result.memory.pk, field="id")
        body = {
            "memory": MemoryOut(memory).data,
            "edges_restored": result.edges_restored,
            "edges_skipped": result.edges_skipped,
        }
        return Response(body, status=status.HTTP_200_OK)
