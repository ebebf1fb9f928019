"""What every API view shares: token auth, the error shape, request-size limit, schema."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.urls import reverse
from drf_spectacular.openapi import AutoSchema
from rest_framework.exceptions import ValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.metadata import SimpleMetadata
from rest_framework.renderers import JSONRenderer
from rest_framework.serializers import Serializer

from apps.access.models import ApiToken

from ..auth import ApiTokenAuthentication, HasApiToken
from ..errors import RequestTooLarge, api_exception_handler
from ..serializers import ErrorSerializer

ERROR_RESPONSES = {
    "400": "Invalid input; `errors` names each offending field.",
    "401": "Missing or invalid API token.",
    "403": "The token is read-only.",
    "404": "Not found, or outside the token's namespaces.",
    "413": "Request body too large.",
    "429": "Too many requests for this token; retry after the `Retry-After` header's seconds.",
    "503": "The database is unavailable for a moment; retry after `Retry-After` seconds.",
}


class ApiAutoSchema(AutoSchema):
    """Documents the shared error responses on every operation."""

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        for code, description in ERROR_RESPONSES.items():
            if code not in responses:
                body = self._get_response_for_code(ErrorSerializer, code, direction=direction)
                body["description"] = description
                responses[code] = body
        return responses


class BasicMetadata(SimpleMetadata):
    """OPTIONS answers name, description and formats; the OpenAPI schema documents the rest."""

    def determine_metadata(self, request, view):
        return {
            "name": view.get_view_name(),
            "description": view.get_view_description(),
            "renders": [r.media_type for r in view.renderer_classes],
            "parses": [p.media_type for p in view.parser_classes],
            "schema": reverse("api:schema"),
        }


class TokenApiView(GenericAPIView):
    authentication_classes = [ApiTokenAuthentication]
    permission_classes = [HasApiToken]
    pagination_class = None
    metadata_class = BasicMetadata
    # JSON only: browsers cannot send bearer tokens; /api/docs/ is the interactive page.
    renderer_classes = [JSONRenderer]
    schema = ApiAutoSchema()

    @property
    def token(self) -> ApiToken:
        return self.request.auth

    def get_exception_handler(self):
        return api_exception_handler

    def initial(self, request, *args, **kwargs):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if limit and length > limit:
            raise RequestTooLarge(f"Request body is {length} bytes; the limit is {limit}.")
        super().initial(request, *args, **kwargs)

    @staticmethod
    def parse(serializer_class: type[Serializer], data: Any) -> dict[str, Any]:
        if data is None or not hasattr(data, "get"):
            raise ValidationError({"non_field_errors": ["Expected a JSON object."]})
        serializer = serializer_class(data=data)
        serializer.is_valid(raise_exception=True)
        return dict(serializer.validated_data)
