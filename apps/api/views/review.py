"""Approving and rejecting memories that wait for review, and a namespace's trust policies."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response

from apps.access.permissions import Action
from apps.access.scoping import namespace_for, parse_memory_id, require
from apps.core.exceptions import NotFound, PermissionDenied
from apps.memories.models import Memory
from apps.memories.services.namespaces import namespace_policies_set
from apps.queues import review

from ..serializers import NamespacePolicyIn, NamespacePolicyOut, ReviewOut
from .base import TokenApiView


def _pending_for(view: TokenApiView, pk) -> Memory:
    """A pending memory of a namespace the token reaches (else 404, as for a missing one)."""
    memory_id = parse_memory_id(pk, "id")
    found = review.pending_memory_for(view.token, memory_id)
    if found is not None:
        return found
    raise NotFound(f"Memory {memory_id} is not waiting for review, or you cannot access it.")


class MemoryApproveApi(TokenApiView):
    @extend_schema(
        operation_id="memories_approve",
        request=None,
        responses=ReviewOut,
        summary="Approve a memory that waits for review (trusted tokens only, never the token "
        "that wrote it); it is then found, and its near-duplicates and possible updates are "
        "reported.",
    )
    def post(self, request, pk):
        memory = _pending_for(self, pk)
        checks = review.memory_approve(memory=memory, actor=self.token, door="rest")
        return Response(ReviewOut({"id": memory.pk, "review": "approved", **checks}).data)


class MemoryRejectApi(TokenApiView):
    @extend_schema(
        operation_id="memories_reject",
        request=None,
        responses={204: None},
        summary="Reject a memory that waits for review: it goes to the trash.",
    )
    def post(self, request, pk):
        memory = _pending_for(self, pk)
        review.memory_reject(memory=memory, actor=self.token, door="rest")
        return Response(status=status.HTTP_204_NO_CONTENT)


class NamespaceDetailApi(TokenApiView):
    @extend_schema(operation_id="namespaces_read", responses=NamespacePolicyOut)
    def get(self, request, name):
        namespace = namespace_for(self.token, name)
        return Response(NamespacePolicyOut(namespace).data)

    @extend_schema(
        operation_id="namespaces_update",
        request=NamespacePolicyIn,
        responses=NamespacePolicyOut,
        summary="Set the namespace's review policy (off, flagged, all) and secrets policy "
        "(refuse, redact): a token an owner marked trusted only.",
    )
    def patch(self, request, name):
        data = self.parse(NamespacePolicyIn, request.data)
        namespace = namespace_for(self.token, name)
        if not getattr(self.token, "trusted", False):
            raise PermissionDenied(
                "Only a token an owner marked trusted may change a namespace's policies; "
                "owners change them on the namespace's trust settings page (from its Members "
                "page)."
            )
        require(self.token, namespace, Action.CHANGE)
        namespace = namespace_policies_set(namespace=namespace, **data)
        return Response(NamespacePolicyOut(namespace).data)
