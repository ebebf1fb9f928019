"""Memories: list with filters, create, batch create, read, update, delete."""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import status
from rest_framework.response import Response

from apps.access.permissions import Action
from apps.access.scoping import batch_job_for, memory_for, namespace_for
from apps.memories import selectors, services
from apps.transfer import batch_jobs
from apps.transfer.models import BatchJob

from ..etags import etag, expected_version
from ..pagination import StrictLimitOffsetPagination
from ..serializers import (
    BatchJobOut,
    BatchResultOut,
    ErrorSerializer,
    MemoryBatchIn,
    MemoryCreateIn,
    MemoryDeleteIn,
    MemoryFilterIn,
    MemoryOut,
    MemoryUpdateIn,
    WriteResultOut,
)
from .base import TokenApiView


def write_result_data(result) -> dict:
    return {
        "memory": MemoryOut(result.memory).data,
        "created": result.created,
        "duplicate_of": result.duplicate_of.id if result.duplicate_of else None,
        "near_duplicates": [
            {"id": d["id"], "similarity": d["similarity"]} for d in result.near_duplicates
        ],
        "chunks": [c.id for c in result.chunks],
        "inferred_tags": list(result.inferred_tags),
        "supersedes": list(result.superseded),
        "caused_by": list(result.caused_by),
        "depends_on": list(result.depends_on),
        "possible_updates": [
            {k: u[k] for k in ("id", "title", "why")} for u in result.possible_updates
        ],
        "possible_contradictions": [
            {k: u[k] for k in ("id", "title", "why")} for u in result.possible_contradictions
        ],
        "review": result.memory.review,
        "review_reason": result.memory.review_reason,
        "redacted": list(result.redacted),
    }


class MemoryListCreateApi(TokenApiView):
    pagination_class = StrictLimitOffsetPagination

    @extend_schema(
        operation_id="memories_list",
        parameters=[MemoryFilterIn],
        responses=MemoryOut(many=True),
        summary="List memories of the token's namespaces, newest first.",
    )
    def get(self, request):
        filters = self.parse(MemoryFilterIn, request.query_params)
        name = filters.get("namespace")
        memories = selectors.memory_list(
            principal=self.token,
            namespace=namespace_for(self.token, name) if name else None,
            archived=filters["archived"],
            tags=[t.strip() for t in filters.get("tags", "").split(",") if t.strip()],
            category=filters.get("category", ""),
            after=filters.get("after"),
            before=filters.get("before"),
            file_path=filters.get("file_path", ""),
            person=filters.get("person", ""),
            credential=filters.get("credential", ""),
            door=filters.get("door", ""),
        )
        page = self.paginate_queryset(memories)
        return self.get_paginated_response(MemoryOut(page, many=True).data)

    @extend_schema(
        operation_id="memories_create",
        request=MemoryCreateIn,
        responses={
            201: WriteResultOut,
            200: OpenApiResponse(WriteResultOut, description="Identical content existed."),
        },
        summary="Store one memory (long markdown is chunked; duplicates are reported).",
    )
    def post(self, request):
        data = self.parse(MemoryCreateIn, request.data)
        namespace = namespace_for(self.token, data.pop("namespace", None), action=Action.CHANGE)
        result = services.memory_create(namespace=namespace, actor=self.token, door="rest", **data)
        code = status.HTTP_201_CREATED if result.created else status.HTTP_200_OK
        return Response(write_result_data(result), status=code)


class MemoryBatchApi(TokenApiView):
    @extend_schema(
        operation_id="memories_batch_create",
        request=MemoryBatchIn,
        responses={
            201: BatchResultOut,
            202: OpenApiResponse(BatchJobOut, description="Kept for the background: poll it."),
        },
        summary="Store many memories, all or none: small batches at once (201), larger ones in "
        "the background (202 with a job to poll).",
    )
    def post(self, request):
        data = self.parse(MemoryBatchIn, request.data)
        namespace = namespace_for(self.token, data.get("namespace"), action=Action.CHANGE)
        results = batch_jobs.write_or_keep(
            namespace=namespace,
            items=[dict(item) for item in data["items"]],
            on_duplicate=data["on_duplicate"],
            actor=self.token,
            door="rest",
            background=data["background"],
        )
        if isinstance(results, BatchJob):
            body = batch_job_data(results, request)
            headers = {"Location": body["status_url"]}
            return Response(body, status=status.HTTP_202_ACCEPTED, headers=headers)
        created = sum(1 for r in results if r.created)
        body = {
            "created": created,
            "already_stored": len(results) - created,
            "results": [write_result_data(r) for r in results],
        }
        return Response(body, status=status.HTTP_201_CREATED)


JOB_ID = OpenApiParameter("pk", OpenApiTypes.UUID, OpenApiParameter.PATH, description="Job id.")


class MemoryBatchJobApi(TokenApiView):
    @extend_schema(
        operation_id="memories_batch_job",
        parameters=[JOB_ID],
        responses={200: BatchJobOut, 404: ErrorSerializer},
        summary="A batch written in the background: its state, progress and, once done, results.",
    )
    def get(self, request, pk):
        job = batch_job_for(self.token, pk)
        return Response(batch_job_data(job, request))


def batch_job_data(job, request) -> dict:
    url = request.build_absolute_uri(reverse("api:memories-batch-job", args=[job.pk]))
    return BatchJobOut({**batch_jobs.summary(job), "status_url": url}).data


MEMORY_ID = OpenApiParameter("id", OpenApiTypes.UUID, OpenApiParameter.PATH)
IF_MATCH = OpenApiParameter(
    "If-Match",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    description='The ETag a read answered (`"<version>"`): refuse the write (412) when the '
    "memory changed since.",
)


@extend_schema_view(
    get=extend_schema(parameters=[MEMORY_ID]),
    patch=extend_schema(parameters=[MEMORY_ID]),
    delete=extend_schema(parameters=[MEMORY_ID]),
)
class MemoryDetailApi(TokenApiView):
    @extend_schema(operation_id="memories_read", responses=MemoryOut)
    def get(self, request, pk):
        memory = memory_for(self.token, pk, field="id")
        return Response(MemoryOut(memory).data, headers={"ETag": etag(memory)})

    @extend_schema(
        operation_id="memories_update",
        parameters=[IF_MATCH],
        request=MemoryUpdateIn,
        responses={200: MemoryOut, 412: ErrorSerializer},
        summary="Change some fields; new content is re-embedded. With If-Match: only if the "
        "memory is still at that version (412 otherwise).",
    )
    def patch(self, request, pk):
        changes = self.parse(MemoryUpdateIn, request.data)
        confirmed = changes.pop("confirm_constitutional", False)
        version = expected_version(request)
        memory = memory_for(self.token, pk, action=Action.CHANGE, field="id")
        if changes or version is not None:
            memory = services.memory_update(
                memory=memory,
                actor=self.token,
                door="rest",
                expected_version=version,
                confirm_constitutional=confirmed,
                **changes,
            )
        return Response(MemoryOut(memory).data, headers={"ETag": etag(memory)})

    @extend_schema(
        operation_id="memories_delete",
        parameters=[IF_MATCH, MemoryDeleteIn],
        responses={204: None, 412: ErrorSerializer},
    )
    def delete(self, request, pk):
        confirmed = self.parse(MemoryDeleteIn, request.query_params)["confirm_constitutional"]
        version = expected_version(request)
        memory = memory_for(self.token, pk, action=Action.CHANGE, field="id")
        services.memory_delete(
            memory=memory,
            actor=self.token,
            door="rest",
            expected_version=version,
            confirm_constitutional=confirmed,
        )
        return Response(status=status.HTTP_204_NO_CONTENT)
