"""Constitutional memories are the rules a namespace holds to: changing one (its content or
tier), superseding, merging away, archiving or deleting it needs an owner and an explicit
confirmation. Through a token, only one an owner marked trusted, with `confirm_constitutional`.

Whether a person owns the namespace is the registered permission policy's answer
(apps.core.permissions, MANAGE), so the write path asks without importing apps.access.
"""

from __future__ import annotations

from collections.abc import Iterable

from apps.core.exceptions import PermissionDenied, ValidationFailed
from apps.core.permissions import Action, allowed_namespaces

from .models import Memory, Tier

CONFIRM = "confirm_constitutional"
# Recorded in the revision of a confirmed change, so the history shows what it touched.
RISK = {"risk": "constitutional"}


def guard(memories: Iterable[Memory], *, actor, confirmed: bool, what: str) -> bool:
    """Refuse `what` ("Archiving", ...) of any constitutional memory among `memories` unless
    an owner (or a trusted token) confirmed it; True when one was among them."""
    ruled = [m for m in memories if m.tier == Tier.CONSTITUTIONAL]
    if ruled:
        require(ruled[0], actor=actor, confirmed=confirmed, what=what)
    return bool(ruled)


def require(rule: Memory, *, actor, confirmed: bool, what: str) -> None:
    """Refuse `what` of the constitutional memory `rule` unless an owner (or a trusted token)
    confirmed it. The server's own commands and jobs (no actor) go ahead."""
    if actor is None:
        return
    if hasattr(actor, "held_for_review"):  # a credential: an API token or a connected app
        if not getattr(actor, "trusted", False):
            raise PermissionDenied(
                f"{what} a constitutional memory needs an owner (in the web UI) or a token an "
                f"owner marked trusted, with {CONFIRM}: true."
            )
    elif not allowed_namespaces(actor, Action.MANAGE).filter(pk=rule.namespace_id).exists():
        raise PermissionDenied(f"{what} a constitutional memory needs an owner of the namespace.")
    if not confirmed:
        title = rule.display_title[:60]
        raise ValidationFailed(
            {CONFIRM: f"{what} the constitutional memory “{title}”: confirm it explicitly."}
        )
