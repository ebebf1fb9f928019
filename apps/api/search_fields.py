"""The REST search parameters, derived from apps.search.params.SEARCH_ARGS (the one
declaration of the search request), so REST offers exactly the bounds the service checks."""

from __future__ import annotations

from collections.abc import Mapping

from rest_framework import serializers

from apps.search.params import SEARCH_ARGS, Arg, public_args

from .fields import InstantField, SafeCharField, StrictSerializer


def search_serializer(
    args: Mapping[str, Arg] = SEARCH_ARGS, *, extra: Mapping[str, serializers.Field] | None = None
) -> type[serializers.Serializer]:
    """A serializer class with one field per public search argument (plus `extra`, e.g. the
    REST-only namespace field)."""
    fields = {name: search_field(arg) for name, arg in public_args(args).items()}
    fields.update(extra or {})
    return type("SearchIn", (StrictSerializer,), fields)


def search_field(arg: Arg) -> serializers.Field:
    common: dict = {"required": arg.required, "help_text": arg.help}
    if not arg.required and arg.kind not in ("strings", "choices"):
        if arg.default is not None:
            common["default"] = arg.default
        else:
            common["allow_null"] = True
    if arg.kind == "text":
        return SafeCharField(max_length=arg.max_length, allow_blank=True, **common)
    if arg.kind == "choice":
        return serializers.ChoiceField(choices=list(arg.choices), **common)
    if arg.kind == "integer":
        return serializers.IntegerField(min_value=arg.minimum, max_value=arg.maximum, **common)
    if arg.kind == "number":
        return serializers.FloatField(min_value=arg.minimum, max_value=arg.maximum, **common)
    if arg.kind == "boolean":
        return serializers.BooleanField(**common)
    if arg.kind == "instant":
        return InstantField(**common)
    if arg.kind == "strings":
        child = SafeCharField(max_length=arg.max_length)
        return serializers.ListField(child=child, max_length=arg.max_items, **common)
    if arg.kind == "choices":
        child = serializers.ChoiceField(choices=list(arg.choices))
        return serializers.ListField(child=child, max_length=arg.max_items, **common)
    raise ValueError(f"no REST field for {arg.kind!r}")
