"""Namespaces."""

from __future__ import annotations

import re

from apps.core.exceptions import ValidationFailed

from ..models import Namespace

NAMESPACE_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,99}$")


# --- namespaces ------------------------------------------------------------------------------


def namespace_get_or_create(*, name: str, description: str = "") -> Namespace:
    if not isinstance(name, str) or not NAMESPACE_RE.match(name):
        raise ValidationFailed(
            {"namespace": f"{name!r} is not a valid namespace name (a-z, 0-9, - and _)."}
        )
    namespace, _ = Namespace.objects.get_or_create(name=name, defaults={"description": description})
    return namespace
