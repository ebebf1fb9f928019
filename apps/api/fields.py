"""REST input derived from the request models, and strictness every input shares.

- `serializer_for`: the one adapter from a request model (apps.search.params.SearchParams,
  apps.memories.fields.MemoryCreate / MemoryPatch) to a DRF serializer, so REST accepts exactly
  what the services validate and the OpenAPI schema states the same bounds.
- `InstantField`: dates through apps.core.dates.parse_instant, the parser every door uses.
- `StrictSerializer`: a body or query key the serializer does not declare is refused with a
  400 naming it (a typo such as "colour" must not give 201 and silently drop the value).
"""

from __future__ import annotations

import copy
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from pydantic import BaseModel
from rest_framework import serializers

from apps.core.dates import parse_instant
from apps.core.exceptions import ValidationFailed
from apps.core.schema import Spec, specs
from apps.core.values import check_json, text_problem

TAG_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:/ -]{0,63}$"  # stored lowercased, spaces as "-"


@extend_schema_field(OpenApiTypes.DATETIME)
class InstantField(serializers.Field):
    default_error_messages = {"invalid": "Expected an ISO 8601 date or date-time."}

    def to_internal_value(self, data):
        try:
            return parse_instant(data, field=self.field_name)
        except ValidationFailed as exc:
            raise serializers.ValidationError(exc.errors[self.field_name]) from None

    def to_representation(self, value):
        return value.isoformat() if value else None


class SafeCharField(serializers.CharField):
    """A CharField that also refuses what PostgreSQL cannot store (lone surrogates)."""

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        problem = text_problem(value)
        if problem:
            raise serializers.ValidationError(problem)
        return value


class SafeRegexField(serializers.RegexField, SafeCharField):
    pass


@extend_schema_field(OpenApiTypes.OBJECT)
class JsonObjectField(serializers.DictField):
    """A JSON object jsonb can hold (no NUL, valid Unicode, finite numbers, bounded size)."""

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        try:
            return check_json(value, field=self.field_name)
        except ValidationFailed as exc:
            raise serializers.ValidationError(
                [f"{path}: {' '.join(msgs)}" for path, msgs in exc.errors.items()]
            ) from None


class StrictSerializer(serializers.Serializer):
    """Refuses keys it does not declare, naming each (nested item serializers too)."""

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(str(k)[:100] for k in set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({name: ["Unknown field."] for name in unknown})
        return super().to_internal_value(data)


def serializer_for(
    model: type[BaseModel],
    name: str,
    *,
    defaults: bool = False,
    base: type[serializers.Serializer] = StrictSerializer,
    **extra: Any,
) -> type[serializers.Serializer]:
    """A serializer class with one field per field of `model` (plus `extra`). `defaults` fills
    the model's defaults into the validated data (search arguments); without it a field left
    out stays out (a memory's update changes only what is sent)."""
    fields = {
        field: _drf_field(spec, info.description or "", info.is_required(), info.default, defaults)
        for field, (spec, info) in specs(model).items()
    }
    # Copied so that they are created after the model's fields, which DRF lists first.
    extra = {field: copy.deepcopy(declared) for field, declared in extra.items()}
    attrs = {"__doc__": model.__doc__, "__module__": base.__module__, **fields, **extra}
    return type(name, (base,), attrs)


def _drf_field(
    spec: Spec, help_text: str, required: bool, default: Any, defaults: bool
) -> serializers.Field:
    common: dict[str, Any] = {"required": required, "help_text": help_text}
    if defaults and not required and spec.kind not in ("strings", "choices"):
        if default is not None:
            common["default"] = default
        else:
            common["allow_null"] = True
    if spec.kind == "text" and spec.nonblank:
        return SafeRegexField(
            r"\S",
            max_length=spec.max_length,
            trim_whitespace=False,
            error_messages={"invalid": "Must contain some text."},
            **common,
        )
    if spec.kind == "text":
        return SafeCharField(max_length=spec.max_length, allow_blank=True, **common)
    if spec.kind == "strings":
        child = SafeCharField(max_length=spec.max_length)
        return serializers.ListField(child=child, max_length=spec.max_items, **common)
    if spec.kind == "tags":
        child = SafeRegexField(
            TAG_PATTERN,
            max_length=spec.max_length,
            error_messages={"invalid": "A tag is letters, digits, spaces and _ . : / -."},
        )
        return serializers.ListField(child=child, max_length=spec.max_items, **common)
    if spec.kind == "choice":
        return serializers.ChoiceField(choices=list(spec.labels or spec.choices), **common)
    if spec.kind == "choices":
        child = serializers.ChoiceField(choices=list(spec.choices))
        return serializers.ListField(child=child, max_length=spec.max_items, **common)
    if spec.kind == "integer":
        return serializers.IntegerField(min_value=spec.minimum, max_value=spec.maximum, **common)
    if spec.kind == "number":
        return serializers.FloatField(min_value=spec.minimum, max_value=spec.maximum, **common)
    if spec.kind == "boolean":
        return serializers.BooleanField(**common)
    if spec.kind == "json":
        return JsonObjectField(**common)
    if spec.kind == "instant":
        return InstantField(**common)
    raise ValueError(f"no REST field for {spec.kind!r}")
