"""Expired OAuth grants and tokens leave on the schedule (django-oauth-toolkit's `cleartokens`,
run by the `oauth-cleartokens` entry: docs/jobs.md), so these tables hold the live ones plus at
most one schedule period of expired ones. Revoked refresh tokens stay until they would have
expired: reuse protection (REFRESH_TOKEN_REUSE_PROTECTION) needs them to spot a replay."""

from __future__ import annotations

from django.core.management import call_command
from oauth2_provider.models import (
    get_access_token_model,
    get_grant_model,
    get_id_token_model,
    get_refresh_token_model,
)


def oauth_tokens_clear() -> dict:
    """Run DOT's `cleartokens`; returns the sizes left."""
    call_command("cleartokens")
    return oauth_table_sizes()


def oauth_table_sizes() -> dict:
    """Row counts of the grant and token tables (shown in /healthz)."""
    return {
        "grants": get_grant_model().objects.count(),
        "access_tokens": get_access_token_model().objects.count(),
        "refresh_tokens": get_refresh_token_model().objects.count(),
        "id_tokens": get_id_token_model().objects.count(),
    }
