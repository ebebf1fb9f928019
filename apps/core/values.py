"""What PostgreSQL can store: checks shared by every door before a value reaches the database.

PostgreSQL text and jsonb refuse NUL characters and invalid Unicode (a lone surrogate, which
JSON's "\\ud800" escape produces), jsonb refuses NaN and infinity, and deeply nested JSON makes
both the parser and Python's recursion fail. Each of these used to surface as a 500 from the
database driver; here they become a ValidationFailed naming the field.
"""

from __future__ import annotations

import json
import math
import re
import uuid

from .exceptions import ValidationFailed

JSON_MAX_DEPTH = 20
JSON_MAX_BYTES = 64 * 1024
_SURROGATE = re.compile("[\ud800-\udfff]")


def text_problem(value: str) -> str | None:
    """Why PostgreSQL would refuse this text, or None."""
    if "\x00" in value:
        return "Contains a NUL character (\\u0000), which cannot be stored."
    if _SURROGATE.search(value):
        return "Contains invalid Unicode (a lone surrogate), which cannot be stored."
    return None


def check_text(value: str, *, field: str) -> str:
    problem = text_problem(value)
    if problem:
        raise ValidationFailed({field: problem})
    return value


def json_problem(value: object) -> tuple[str, str] | None:
    """(path inside the value, reason) for the first part jsonb cannot hold, or None."""
    stack: list[tuple[object, str, int]] = [(value, "", 0)]
    while stack:
        item, path, depth = stack.pop()
        if depth > JSON_MAX_DEPTH:
            return path, f"Nested deeper than {JSON_MAX_DEPTH} levels."
        if isinstance(item, str):
            problem = text_problem(item)
            if problem:
                return path, problem
        elif isinstance(item, bool) or item is None or isinstance(item, int):
            continue
        elif isinstance(item, float):
            if not math.isfinite(item):
                return path, "Numbers must be finite (no NaN or infinity)."
        elif isinstance(item, dict):
            for key, child in item.items():
                if not isinstance(key, str):
                    return path, "Object keys must be strings."
                problem = text_problem(key)
                if problem:
                    return f"{path}.{key!r}", f"Key: {problem}"
                stack.append((child, f"{path}.{key}", depth + 1))
        elif isinstance(item, list | tuple):
            for index, child in enumerate(item):
                stack.append((child, f"{path}[{index}]", depth + 1))
        else:
            return path, f"{type(item).__name__} is not a JSON value."
    return None


def check_json(value: object, *, field: str, max_bytes: int = JSON_MAX_BYTES) -> object:
    """The value unchanged when jsonb can store it and it is at most `max_bytes` as JSON."""
    found = json_problem(value)
    if found:
        path, reason = found
        raise ValidationFailed({f"{field}{path}": reason})
    size = len(json.dumps(value, ensure_ascii=False).encode())
    if size > max_bytes:
        raise ValidationFailed({field: f"Is {size} bytes as JSON; the limit is {max_bytes}."})
    return value


def is_uuid(value: str) -> bool:
    """Whether `value` reads as a UUID (a memory id), so a query never meets one that doesn't."""
    try:
        uuid.UUID(value)
    except (TypeError, ValueError):
        return False
    return True
