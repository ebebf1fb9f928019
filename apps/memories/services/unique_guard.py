"""The guard every write runs its inserts under: a clash with a stored row becomes a 400."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import IntegrityError, transaction

from apps.core.exceptions import ValidationFailed

from ..models import CONTENT_UNIQUE


@contextmanager
def unique_content_guard() -> Iterator[None]:
    """Turn a clash with a stored row (the same record, or an id in use) into a 400."""
    try:
        with transaction.atomic():
            yield
    except IntegrityError as exc:
        if CONTENT_UNIQUE in str(exc):
            raise ValidationFailed(
                {"content": "Identical content, time and id are already stored in this namespace."}
            ) from exc
        raise ValidationFailed({"id": "An id in this request already exists."}) from exc
