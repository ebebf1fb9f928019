"""Namespaces."""

from __future__ import annotations

import re

from apps.core.exceptions import ValidationFailed

from ..models import Namespace, ReviewPolicy, SecretsPolicy

NAMESPACE_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,99}$")


# --- namespaces ------------------------------------------------------------------------------


def namespace_get_or_create(*, name: str, description: str = "") -> Namespace:
    if not isinstance(name, str) or not NAMESPACE_RE.match(name):
        raise ValidationFailed(
            {"namespace": f"{name!r} is not a valid namespace name (a-z, 0-9, - and _)."}
        )
    namespace, _ = Namespace.objects.get_or_create(name=name, defaults={"description": description})
    return namespace


def namespace_policies_set(
    *, namespace: Namespace, review: str | None = None, secrets: str | None = None
) -> Namespace:
    """Set the review policy (which writes wait for a person) and the secrets policy (refuse
    or redact credentials); None leaves one as it is."""
    errors = {}
    if review is not None and review not in ReviewPolicy.values:
        errors["review"] = f"Must be one of: {', '.join(ReviewPolicy.values)}."
    if secrets is not None and secrets not in SecretsPolicy.values:
        errors["secrets"] = f"Must be one of: {', '.join(SecretsPolicy.values)}."
    if errors:
        raise ValidationFailed(errors)
    changed = {k: v for k, v in {"review": review, "secrets": secrets}.items() if v is not None}
    for name, value in changed.items():
        setattr(namespace, name, value)
    if changed:
        namespace.save(update_fields=list(changed))
    return namespace
