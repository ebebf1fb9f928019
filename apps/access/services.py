"""Token creation and authentication. The raw secret is returned once and never stored."""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
from collections.abc import Iterable

from django.db import InterfaceError, OperationalError, transaction
from django.utils import timezone

from apps.core.exceptions import ValidationFailed
from apps.memories.models import Namespace

from .models import ApiToken, NamespaceMembership, Role

logger = logging.getLogger(__name__)

TOKEN_PREFIX = "mh_"


def hash_token(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


@transaction.atomic
def token_create(
    *,
    name: str,
    namespaces: Iterable[Namespace],
    read_only: bool = False,
    trusted: bool = False,
) -> tuple[ApiToken, str]:
    """A new token and its secret (shown once). `trusted`: its writes do not wait under review
    "all", and it may approve or reject what others wrote (docs/trust.md)."""
    namespaces = list(namespaces)
    if not namespaces:
        raise ValidationFailed({"namespaces": "A token needs at least one namespace."})
    raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        name=name or "token",
        prefix=raw[:10],
        key_hash=hash_token(raw),
        read_only=read_only,
        trusted=trusted,
    )
    token.namespaces.set(namespaces)
    return token, raw


def token_authenticate(raw: str | None) -> ApiToken | None:
    """The live token for `raw`, or None. Records last use at most once a minute."""
    if not raw:
        return None
    digest = hash_token(raw.strip())
    token = (
        ApiToken.objects.filter(key_hash=digest, revoked=False)
        .prefetch_related("namespaces")
        .first()
    )
    # The lookup is by a hash an attacker cannot steer; the final comparison is constant-time
    # anyway, so no timing difference ever depends on how much of a secret matched.
    if token is None or not hmac.compare_digest(token.key_hash, digest):
        return None
    now = timezone.now()
    if token.last_used_at is None or (now - token.last_used_at).total_seconds() > 60:
        try:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        except (OperationalError, InterfaceError):
            # Bookkeeping only: with the primary down, reads (on a replica) still authenticate.
            logger.warning("token %s: last use not recorded (database unavailable)", token.prefix)
    return token


def token_revoke(*, token: ApiToken) -> ApiToken:
    """Revoke a token: it stops authenticating at once and stays listed (revoked)."""
    ApiToken.objects.filter(pk=token.pk).update(revoked=True)
    token.revoked = True
    return token


@transaction.atomic
def membership_set(*, namespace: Namespace, user, role: str) -> NamespaceMembership:
    """Give `user` a role in `namespace` (adding or changing the membership).

    A namespace keeps at least one owner: the last owner cannot be demoted.
    """
    if role not in Role.values:
        raise ValidationFailed({"role": f"{role!r} is not one of: {', '.join(Role.values)}."})
    if not user.is_active:
        raise ValidationFailed({"username": f"'{user.get_username()}' is not an active user."})
    current = NamespaceMembership.objects.filter(namespace=namespace, user=user).first()
    if current and current.role == Role.OWNER and role != Role.OWNER:
        _keep_an_owner(namespace, user)
    membership, _ = NamespaceMembership.objects.update_or_create(
        namespace=namespace, user=user, defaults={"role": role}
    )
    return membership


@transaction.atomic
def membership_remove(*, namespace: Namespace, user) -> None:
    current = NamespaceMembership.objects.filter(namespace=namespace, user=user).first()
    if current is None:
        return
    if current.role == Role.OWNER:
        _keep_an_owner(namespace, user)
    current.delete()


def _keep_an_owner(namespace: Namespace, leaving) -> None:
    others = NamespaceMembership.objects.filter(namespace=namespace, role=Role.OWNER).exclude(
        user=leaving
    )
    if not others.select_for_update().exists():
        raise ValidationFailed({"role": f"'{namespace.name}' must keep at least one owner."})
