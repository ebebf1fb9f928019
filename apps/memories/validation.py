"""Input checking for the write path: every problem is reported with the field that has it."""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from apps.core.dates import parse_instant
from apps.core.exceptions import ValidationFailed
from apps.core.values import check_json, text_problem

from .fields import ALL_NAMES, MEMORY_FIELDS, MemoryField
from .models import Category, Relation, Tier
from .provenance import check_given, check_source_url
from .tags import TAG_NAME_RE, normalize_tag


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
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    supersedes: list[str] = field(default_factory=list)
    caused_by: list[str] = field(default_factory=list)
    depends_on: list[str] = field(default_factory=list)
    source_url: str = ""
    provenance: dict | None = None  # as an exported record brings it (imports only)


class _Errors:
    def __init__(self, prefix: str):
        self.prefix = prefix
        self.errors: dict[str, list[str]] = {}

    def add(self, name: str, message: str) -> None:
        self.errors.setdefault(f"{self.prefix}{name}", []).append(message)


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
    """Check one memory's fields against the declaration in fields.py; every problem is
    collected and raised together as ValidationFailed, keyed by `prefix` + field name."""
    errors = _Errors(prefix)
    if not isinstance(data, dict):
        raise ValidationFailed({prefix.rstrip(".") or "item": "Must be an object."})
    for unknown in sorted(set(data) - ALL_NAMES, key=str):
        errors.add(str(unknown)[:100], "Unknown field.")
    result = MemoryInput(content="")
    for spec in MEMORY_FIELDS:
        if spec.name == "id":
            _identity(errors, data, result)
        elif spec.name in data or (spec.required and not partial):
            value = _CHECKS[spec.kind](errors, data, spec, partial)
            if value is not _SKIP:
                setattr(result, spec.name, value)
    if result.valid_from and result.valid_until and result.valid_until < result.valid_from:
        errors.add("valid_until", "Must not be earlier than valid_from.")
    _check_provenance(errors, data, result)
    if errors.errors:
        raise ValidationFailed(errors.errors)
    return result


def _check_provenance(errors: _Errors, data: dict, result: MemoryInput) -> None:
    problem = check_source_url(result.source_url)
    if problem:
        errors.add("source_url", problem)
    if data.get("provenance") is not None:
        try:
            result.provenance = check_given(data["provenance"])
        except ValidationFailed as exc:
            for name, messages in exc.errors.items():
                for message in messages if isinstance(messages, list) else [messages]:
                    errors.errors.setdefault(f"{errors.prefix}{name}", []).append(message)


_SKIP = object()


def _check_text(errors: _Errors, data: dict, spec: MemoryField, partial: bool):
    value = _text(errors, data, spec.name, spec.max_length, required=spec.required and not partial)
    problem = text_problem(value)
    if problem:
        errors.add(spec.name, problem)
    value = value.strip()
    if spec.name == "external_id":
        return value or None
    return value


def _check_strings(errors: _Errors, data: dict, spec: MemoryField, partial: bool):
    items = _string_list(errors, data, spec.name, spec.max_length)
    if spec.max_items and len(items) > spec.max_items:
        errors.add(spec.name, f"{len(items)} items; the limit is {spec.max_items}.")
    for i, item in enumerate(items):
        problem = text_problem(item)
        if problem:
            errors.add(f"{spec.name}[{i}]", problem)
    return items


def _check_tags(errors: _Errors, data: dict, spec: MemoryField, partial: bool):
    tags: list[str] = []
    raw_items = _check_strings(errors, data, spec, partial)
    for i, raw in enumerate(raw_items):
        tag = normalize_tag(raw)
        if not TAG_NAME_RE.match(tag):
            errors.add(
                f"{spec.name}[{i}]",
                f"{raw[:80]!r} is not a valid tag (letters, digits, - _ . : /, at most 64).",
            )
        elif tag not in tags:
            tags.append(tag)
    return tags


def _check_choice(errors: _Errors, data: dict, spec: MemoryField, partial: bool):
    value = data.get(spec.name, spec.default)
    if not isinstance(value, str) or value not in spec.choices:
        shown = repr(value)[:80]
        errors.add(spec.name, f"{shown} is not one of: {', '.join(spec.choices)}.")
        return _SKIP
    return value


def _check_number(errors: _Errors, data: dict, spec: MemoryField, partial: bool):
    value = data.get(spec.name, spec.default)
    bounds = f"{spec.minimum:g} and {spec.maximum:g}"
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        errors.add(spec.name, f"Must be a number between {bounds}.")
        return _SKIP
    if not spec.minimum <= value <= spec.maximum:
        errors.add(spec.name, f"{value:g} is outside {spec.minimum:g}..{spec.maximum:g}.")
        return _SKIP
    return float(value)


def _check_json(errors: _Errors, data: dict, spec: MemoryField, partial: bool):
    value = data.get(spec.name) or {}
    if not isinstance(value, dict):
        errors.add(spec.name, "Must be a JSON object.")
        return _SKIP
    try:
        return check_json(value, field=spec.name)
    except ValidationFailed as exc:
        for name, messages in exc.errors.items():
            for message in messages:
                errors.add(name, message)
        return _SKIP


def _check_instant(errors: _Errors, data: dict, spec: MemoryField, partial: bool):
    try:
        return parse_instant(data.get(spec.name), field=spec.name)
    except ValidationFailed as exc:
        errors.add(spec.name, " ".join(exc.errors[spec.name]))
        return _SKIP


_CHECKS = {
    "text": _check_text,
    "strings": _check_strings,
    "tags": _check_tags,
    "choice": _check_choice,
    "number": _check_number,
    "json": _check_json,
    "instant": _check_instant,
}


def _identity(errors: _Errors, data: dict, result: MemoryInput) -> None:
    """An import's id: a UUID is kept as the id, anything else as external_id."""
    raw_id = data.get("id")
    if raw_id is None:
        return
    try:
        result.id = uuid.UUID(str(raw_id))
    except ValueError:
        text = str(raw_id)
        if len(text) > 200:
            errors.add("id", "Longer than 200 characters.")
        elif text_problem(text):
            errors.add("id", text_problem(text))
        elif result.external_id is None:
            result.external_id = text


def validate_relation(relation: Any, strength: Any) -> tuple[str, float]:
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
