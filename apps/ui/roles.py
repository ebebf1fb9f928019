"""The permission model, as the UI views use it (apps.access.permissions)."""

from __future__ import annotations

from apps.access.permissions import Action, can, namespaces_for

__all__ = ["Action", "can", "namespaces_for"]
