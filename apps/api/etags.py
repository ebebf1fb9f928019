"""Memory versions as HTTP entity tags: GET and PATCH answer `ETag: "<version>"`; a PATCH or
DELETE with `If-Match` is refused with 412 when the memory is at another version by then (the
check runs under the row's lock, in the write path, not here)."""

from __future__ import annotations

from rest_framework import status
from rest_framework.exceptions import APIException

from apps.memories.models import Memory


class PreconditionFailed(APIException):
    status_code = status.HTTP_412_PRECONDITION_FAILED
    default_detail = "The memory changed since the version named in If-Match."
    default_code = "precondition_failed"


def etag(memory: Memory) -> str:
    return f'"{memory.version}"'


def expected_version(request) -> int | None:
    """The version `If-Match` names; None without the header or with `*` (any version).

    If-Match compares entity tags strongly (RFC 9110 13.1.1 and 8.8.3.2): a weak tag never
    matches, so `W/"1"` is refused with 412 rather than read as version 1, and so is a tag
    that is not the quoted form an ETag header gave.
    """
    raw = request.headers.get("If-Match", "").strip()
    if not raw or raw == "*":
        return None
    tags = [t.strip() for t in raw.split(",") if t.strip()]
    if len(tags) != 1:
        raise PreconditionFailed("If-Match: send the one ETag the memory was read with.")
    tag = tags[0]
    if tag.startswith("W/"):
        raise PreconditionFailed(
            f"If-Match: {tag[:40]!r} is a weak entity tag, and If-Match compares strongly "
            "(RFC 9110 13.1.1): send the ETag exactly as the memory was read, e.g. '\"1\"'."
        )
    opaque = tag[1:-1] if len(tag) >= 2 and tag[0] == tag[-1] == '"' else ""
    if not opaque.isdigit() or not opaque.isascii() or len(opaque) > 12:
        raise PreconditionFailed(f"If-Match: {tag[:40]!r} is no version of this memory.")
    return int(opaque)
