"""OAuth connections: what a person granted an application, the tokens that carry it, and
ending them. The protocol itself (codes, PKCE, token rotation) is django-oauth-toolkit's."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable

from django.contrib.auth.models import AbstractBaseUser
from django.db import InterfaceError, OperationalError, transaction
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application, Grant, IDToken, RefreshToken

from apps.access.models import OAuthConnection
from apps.access.permissions import Action, namespaces_for
from apps.core.exceptions import ValidationFailed
from apps.memories.models import Namespace

from .models import RedeemedCode

logger = logging.getLogger(__name__)

MCP_SCOPE = "mcp"


def grantable_namespaces(user: AbstractBaseUser) -> list[Namespace]:
    """The namespaces a person may hand to an app: those they can see themselves."""
    return list(namespaces_for(user, Action.VIEW).order_by("name"))


@transaction.atomic
def connection_grant(
    *,
    application: Application,
    user: AbstractBaseUser,
    namespaces: Iterable[Namespace],
    read_only: bool,
) -> OAuthConnection:
    """Record (or replace) what `user` lets `application` do. Every namespace must be one the
    person can see; whether they may write there is decided at each request."""
    namespaces = list(namespaces)
    if not namespaces:
        raise ValidationFailed({"namespaces": "Choose at least one namespace."})
    allowed = {ns.pk for ns in grantable_namespaces(user)}
    outside = sorted(ns.name for ns in namespaces if ns.pk not in allowed)
    if outside:
        raise ValidationFailed({"namespaces": f"You are not a member of: {', '.join(outside)}."})
    connection, _ = OAuthConnection.objects.update_or_create(
        application=application, user=user, defaults={"read_only": read_only}
    )
    connection.namespaces.set(namespaces)
    return connection


@transaction.atomic
def connection_revoke(*, connection: OAuthConnection) -> None:
    """End a connection: its codes, access and refresh tokens stop working at once."""
    mine = {"application": connection.application, "user": connection.user}
    RefreshToken.objects.filter(**mine).delete()
    AccessToken.objects.filter(**mine).delete()
    IDToken.objects.filter(**mine).delete()
    Grant.objects.filter(**mine).delete()
    connection.delete()


def _code_checksum(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()


def code_redeemed(*, application: Application, code: str, refresh_token: RefreshToken) -> None:
    """Remember that `code` was exchanged for `refresh_token` (and its access token)."""
    RedeemedCode.objects.get_or_create(
        code_checksum=_code_checksum(code),
        defaults={"application": application, "refresh_token": refresh_token},
    )


@transaction.atomic
def code_reused(*, application: Application, code: str, also: RefreshToken | None = None) -> int:
    """A code came back after it was exchanged: revoke every token it led to (the refresh
    token it issued, the ones rotated from it, their access tokens). Returns how many refresh
    tokens were revoked."""
    families = set(
        RedeemedCode.objects.filter(
            code_checksum=_code_checksum(code), application=application
        ).values_list("refresh_token__token_family", flat=True)
    )
    if also is not None:
        families.add(also.token_family)
    families.discard(None)
    if not families:
        return 0
    live = list(
        RefreshToken.objects.select_for_update().filter(
            application=application, token_family__in=families, revoked__isnull=True
        )
    )
    for refresh_token in live:
        refresh_token.revoke()  # ends its access token too
    # Access tokens whose refresh token was already rotated away stay bound to it by source.
    AccessToken.objects.filter(
        application=application, source_refresh_token__token_family__in=families
    ).delete()
    logger.warning(
        "authorization code of application %s used again: %d token chain(s) revoked",
        application.pk,
        len(families),
    )
    return len(live)


def connections_of(user: AbstractBaseUser) -> list[OAuthConnection]:
    return list(
        OAuthConnection.objects.filter(user=user)
        .select_related("application")
        .prefetch_related("namespaces")
        .order_by("-updated_at")
    )


def connection_authenticate(raw: str | None, *, resource: str) -> OAuthConnection | None:
    """The connection behind a live OAuth access token issued for `resource`, or None.

    Refused: unknown, expired or revoked tokens, tokens without the MCP scope, tokens issued
    for another resource (RFC 8707 audience), and those of a person no longer active.
    """
    if not raw:
        return None
    checksum = hashlib.sha256(raw.strip().encode()).hexdigest()
    token = (
        AccessToken.objects.select_related("application", "user")
        .filter(token_checksum=checksum)
        .first()
    )
    if token is None or token.user is None or not token.is_valid([MCP_SCOPE]):
        return None
    if not token.resource or not token.allows_audience(resource):
        return None
    if not token.user.is_active:
        return None
    connection = (
        OAuthConnection.objects.select_related("application", "user")
        .filter(application=token.application, user=token.user)
        .first()
    )
    if connection is not None:
        _touch(connection)
    return connection


def _touch(connection: OAuthConnection) -> None:
    """Record last use at most once a minute (bookkeeping; never fails a request)."""
    now = timezone.now()
    if connection.last_used_at and (now - connection.last_used_at).total_seconds() <= 60:
        return
    try:
        OAuthConnection.objects.filter(pk=connection.pk).update(last_used_at=now)
    except (OperationalError, InterfaceError):
        logger.warning("connection %s: last use not recorded (database unavailable)", connection.pk)
