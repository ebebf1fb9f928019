"""REST input fields derived from the shared declarations, and strictness every input shares.

- `InstantField`: dates through apps.core.dates.parse_instant, the parser every door uses.
- `StrictSerializer`: a body or query key the serializer does not declare is refused with a
  400 naming it (a typo such as "colour" must not give 201 and silently drop the value).
- `memory_serializer_fields`: DRF fields built from apps.memories.fields, so REST accepts
  exactly what the write path validates.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.core.dates import parse_instant
from apps.core.exceptions import ValidationFailed
from apps.core.values import check_json, text_problem
from apps.memories.fields import MemoryField

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


def memory_serializer_fields(
    specs: tuple[MemoryField, ...], *, partial: bool
) -> dict[str, serializers.Field]:
    """One DRF field per declared memory field; `partial` (update) makes every one optional."""
    return {spec.name: _drf_field(spec, required=spec.required and not partial) for spec in specs}


def _drf_field(spec: MemoryField, *, required: bool) -> serializers.Field:
    common = {"required": required, "help_text": spec.description}
    if spec.kind == "text":
        if spec.required:
            return SafeRegexField(
                r"\S",
                max_length=spec.max_length,
                trim_whitespace=False,
                error_messages={"invalid": "Must contain some text."},
                **common,
            )
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
    if spec.kind == "number":
        return serializers.FloatField(min_value=spec.minimum, max_value=spec.maximum, **common)
    if spec.kind == "json":
        return JsonObjectField(**common)
    if spec.kind == "instant":
        return InstantField(**common)
    raise ValueError(f"no REST field for {spec.kind!r}")
