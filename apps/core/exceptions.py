"""Errors the services raise; every interface turns them into its own error shape."""

from __future__ import annotations

from collections.abc import Mapping


class ServiceError(Exception):
    """Base for expected, user-facing failures."""


class ValidationFailed(ServiceError):
    """Bad input. `errors` maps a field path (e.g. "items[3].content") to messages."""

    def __init__(self, errors: Mapping[str, list[str] | str]):
        self.errors = {k: [v] if isinstance(v, str) else list(v) for k, v in errors.items()}
        super().__init__(self.summary())

    def summary(self) -> str:
        return "; ".join(f"{field}: {' '.join(msgs)}" for field, msgs in self.errors.items())


class NotFound(ServiceError):
    """The object does not exist or is outside the caller's namespaces."""


class PermissionDenied(ServiceError):
    """The caller's token may not do this (read-only token, foreign namespace)."""


class VersionConflict(ServiceError):
    """The object changed since the caller read it (its version is no longer the one the caller
    sent). `current` is the object as it is now, so the caller can show both versions."""

    def __init__(self, message: str, *, current=None):
        self.current = current
        super().__init__(message)
