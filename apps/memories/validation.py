"""Input checking for the write path: every problem is reported with the field that has it."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.utils.dateparse import parse_datetime

from .models import Category, Relation, Tier
from .tags import TAG_NAME_RE, normalize_tag

MEMORY_FIELDS = {
    "id",
    "external_id",
    "title",
    "content",
    "category",
    "tags",
    "file_path",
    "source",
    "trigger_phrases",
    "tier",
    "importance",
    "metadata",
    "created_at",
    "updated_at",
}


@dataclass
class MemoryInput:
    content: str
    title: str = ""
    category: str = Category.NOTE
    tags: list[str] = field(default_factory=list)
    file_path: str = ""
    source: str = ""
    trigger_phrases: list[str] = field(default_factory=list)
    tier: str = Tier.NORMAL
    importance: float = 0.5
    metadata: dict = field(default_factory=dict)
    created_at: datetime | None = None
    updated_at: datetime | None = None
    id: uuid.UUID | None = None
    external_id: str | None = None


class _Errors:
    def __init__(self, prefix: str):
        self.prefix = prefix
        self.errors: dict[str, list[str]] = {}

    def add(self, name: str, message: str) -> None:
        self.errors.setdefault(f"{self.prefix}{name}", []).append(message)


def parse_timestamp(value: Any) -> datetime:
    """A timezone-aware datetime from a datetime or an ISO 8601 string (naive means UTC)."""
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, str):
        parsed = parse_datetime(value.strip())
        if parsed is None:
            raise ValueError(f"{value!r} is not an ISO 8601 date-time")
    else:
        raise ValueError("must be an ISO 8601 date-time string")
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed


def _text(errors: _Errors, data: dict, name: str, max_len: int, *, required=False) -> str:
    value = data.get(name)
    if value is None:
        if required:
            errors.add(name, "This field is required.")
        return ""
    if not isinstance(value, str):
        errors.add(name, "Must be a string.")
        return ""
    if required and not value.strip():
        errors.add(name, "May not be empty.")
    if len(value) > max_len:
        errors.add(name, f"Is {len(value)} characters long; the limit is {max_len}.")
    return value


def _string_list(errors: _Errors, data: dict, name: str, max_len: int) -> list[str]:
    value = data.get(name)
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, list | tuple):
        errors.add(name, "Must be a list of strings.")
        return []
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            errors.add(f"{name}[{i}]", "Must be a non-empty string.")
        elif len(item) > max_len:
            errors.add(f"{name}[{i}]", f"Longer than {max_len} characters.")
        else:
            out.append(item.strip())
    return out


def validate_memory_input(data: Any, *, prefix: str = "", partial: bool = False) -> MemoryInput:
    """Check one memory's fields; raise nothing, return (input, errors) via ValidationFailed."""
    from apps.core.exceptions import ValidationFailed

    errors = _Errors(prefix)
    if not isinstance(data, dict):
        raise ValidationFailed({prefix.rstrip(".") or "item": "Must be an object."})
    for unknown in sorted(set(data) - MEMORY_FIELDS):
        errors.add(unknown, "Unknown field.")

    content = _text(
        errors, data, "content", settings.MEMORY_MAX_CONTENT_CHARS, required=not partial
    )
    result = MemoryInput(content=content.strip())
    result.title = _text(errors, data, "title", 300).strip()
    result.file_path = _text(errors, data, "file_path", 1000).strip()
    result.source = _text(errors, data, "source", 200).strip()
    result.trigger_phrases = _string_list(errors, data, "trigger_phrases", 200)

    tags = []
    for i, raw in enumerate(_string_list(errors, data, "tags", 64)):
        tag = normalize_tag(raw)
        if not TAG_NAME_RE.match(tag):
            errors.add(
                f"tags[{i}]",
                f"{raw!r} is not a valid tag (letters, digits, - _ . : /, at most 64).",
            )
        elif tag not in tags:
            tags.append(tag)
    result.tags = tags

    category = data.get("category", Category.NOTE)
    if category not in Category.values:
        errors.add("category", f"{category!r} is not one of: {', '.join(Category.values)}.")
    else:
        result.category = category
    tier = data.get("tier", Tier.NORMAL)
    if tier not in Tier.values:
        errors.add("tier", f"{tier!r} is not one of: {', '.join(Tier.values)}.")
    else:
        result.tier = tier

    importance = data.get("importance", 0.5)
    if isinstance(importance, bool) or not isinstance(importance, int | float):
        errors.add("importance", "Must be a number between 0 and 1.")
    elif not 0 <= importance <= 1:
        errors.add("importance", f"{importance} is outside 0..1.")
    else:
        result.importance = float(importance)

    metadata = data.get("metadata") or {}
    if not isinstance(metadata, dict):
        errors.add("metadata", "Must be a JSON object.")
    else:
        result.metadata = metadata

    for name in ("created_at", "updated_at"):
        if data.get(name) is not None:
            try:
                setattr(result, name, parse_timestamp(data[name]))
            except ValueError as exc:
                errors.add(name, str(exc) + ".")

    raw_id = data.get("id")
    if raw_id is not None:
        try:
            result.id = uuid.UUID(str(raw_id))
        except ValueError:
            result.external_id = str(raw_id)  # a foreign id: kept as external_id
    if data.get("external_id") is not None:
        result.external_id = _text(errors, data, "external_id", 200).strip() or None
    if result.external_id is not None and len(result.external_id) > 200:
        errors.add("id", "Longer than 200 characters.")

    if errors.errors:
        raise ValidationFailed(errors.errors)
    return result


def validate_relation(relation: Any, strength: Any) -> tuple[str, float]:
    from apps.core.exceptions import ValidationFailed

    problems = {}
    if relation not in Relation.values:
        problems["relation"] = f"{relation!r} is not one of: {', '.join(Relation.values)}."
    if isinstance(strength, bool) or not isinstance(strength, int | float):
        problems["strength"] = "Must be a number between 0 and 1."
    elif not 0 <= strength <= 1:
        problems["strength"] = f"{strength} is outside 0..1."
    if problems:
        raise ValidationFailed(problems)
    return relation, float(strength)
