"""limit/offset pagination that refuses (rather than silently clamps) a limit above 100."""

from __future__ import annotations

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import LimitOffsetPagination

MAX_LIMIT = 100


def _non_negative_int(raw: str, name: str, *, minimum: int, maximum: int | None = None) -> int:
    try:
        value = int(raw)
    except (TypeError, ValueError):
        raise ValidationError({name: [f"'{raw}' is not an integer."]}) from None
    if value < minimum or (maximum is not None and value > maximum):
        upper = f" and at most {maximum}" if maximum is not None else ""
        raise ValidationError({name: [f"Must be at least {minimum}{upper}."]})
    return value


class StrictLimitOffsetPagination(LimitOffsetPagination):
    default_limit = 50
    max_limit = MAX_LIMIT

    def get_limit(self, request) -> int:
        raw = request.query_params.get(self.limit_query_param)
        if raw is None or raw == "":
            return self.default_limit
        return _non_negative_int(raw, self.limit_query_param, minimum=1, maximum=self.max_limit)

    def get_offset(self, request) -> int:
        raw = request.query_params.get(self.offset_query_param)
        if raw is None or raw == "":
            return 0
        return _non_negative_int(raw, self.offset_query_param, minimum=0, maximum=10**9)

    def get_schema_operation_parameters(self, view):
        params = super().get_schema_operation_parameters(view)
        for param in params:
            if param["name"] == self.limit_query_param:
                param["schema"].update({"minimum": 1, "maximum": self.max_limit, "default": 50})
            elif param["name"] == self.offset_query_param:
                param["schema"].update({"minimum": 0, "maximum": 10**9})
        return params
