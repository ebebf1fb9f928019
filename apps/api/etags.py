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
    """The version `If-Match` names; None without the header or with `*` (any version)."""
    raw = request.headers.get("If-Match", "").strip()
    if not raw or raw == "*":
        return None
    tags = [t.strip() for t in raw.split(",") if t.strip()]
    if len(tags) != 1:
        raise PreconditionFailed("If-Match: send the one ETag the memory was read with.")
    tag = tags[0].removeprefix("W/").strip('"')
    if not tag.isdigit() or len(tag) > 12:
        raise PreconditionFailed(f"If-Match: {tags[0][:40]!r} is no version of this memory.")
    return int(tag)
